// Package cluster is which serve node owns which user when several serve
// hosts share one set of users: a user's owner is a key in etcd attached
// to the owner's session lease, taken in a transaction only while the key
// is absent, so at most one node holds a user and a node that dies loses
// its users when its lease ends.
//
// A node also keeps a fence: the time until which it may still write,
// counted from the moment it sent its last successful keep-alive minus a
// guard. The lease on the server cannot end before that moment plus the
// TTL, so a node cut off from etcd stops writing (its fence falls) before
// any other node can be granted its users.
package cluster

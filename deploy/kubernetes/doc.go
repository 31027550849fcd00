// Package kubernetes holds the manifests that run mindmount serve as a
// cluster on Kubernetes (a DaemonSet, its Service, etcd, the Secret); its
// test decodes each strictly into the Kubernetes API types.
package kubernetes

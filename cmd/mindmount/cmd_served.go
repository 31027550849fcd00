package main

import "github.com/mindmount/mindmount/fs/tracker"

// scanServed is tracker.ScanServed, the memories as a model may see them.
// It stays under this name for cmd_consolidate.go, which another change
// converts at the same time; once both are merged, call tracker.ScanServed
// directly.
var scanServed = tracker.ScanServed

package main

import "errors"

// runHarnessHook handles an agent harness's lifecycle event. Owned by the
// harness work.
func runHarnessHook(event string, args []string) error {
	return errors.New("harness hook " + event + ": not implemented yet")
}

// installHarness wires (or unwires) an agent harness to the memory at target.
func installHarness(harness, scope, target string, uninstall bool) error {
	return errors.New("harness " + harness + ": not implemented yet")
}

package mount

import (
	"log/slog"
	"slices"
	"testing"
	"time"
)

// TestFuseOptions checks the one builder of the go-fuse options shared by
// the single- and multi-user mounts: an hour of caching unless told, and
// "default_permissions" exactly when the kernel is to check mode bits.
func TestFuseOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       fuseConfig
		timeout time.Duration
		perms   bool
	}{
		{"single user", fuseConfig{fsName: "/r"}, time.Hour, false},
		{"allow other", fuseConfig{fsName: "/r", allowOther: true, kernelChecks: true}, time.Hour, true},
		{"users, no kernel checks", fuseConfig{fsName: "mindmount-serve", allowOther: true}, time.Hour, false},
		{"timeout set", fuseConfig{cacheTimeout: time.Second}, time.Second, false},
		{"timeout negative", fuseConfig{cacheTimeout: -time.Second}, time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.log = slog.Default()
			o := fuseOptions(tc.c)
			for what, d := range map[string]*time.Duration{"entry": o.EntryTimeout, "attr": o.AttrTimeout, "negative": o.NegativeTimeout} {
				if d == nil || *d != tc.timeout {
					t.Errorf("%s timeout = %v, want %v", what, d, tc.timeout)
				}
			}
			m := o.MountOptions
			if got := slices.Contains(m.Options, "default_permissions"); got != tc.perms {
				t.Errorf("default_permissions = %v, want %v (options %q)", got, tc.perms, m.Options)
			}
			if m.AllowOther != tc.c.allowOther || m.FsName != tc.c.fsName || m.Name != "mindmount" {
				t.Errorf("AllowOther %v FsName %q Name %q, want %v %q mindmount", m.AllowOther, m.FsName, m.Name, tc.c.allowOther, tc.c.fsName)
			}
			if !m.DirectMount || !m.DisableXAttrs || !m.DisableReadDirPlus || m.Logger == nil || o.Logger == nil {
				t.Errorf("mount options lost a default: %+v", m)
			}
		})
	}
}

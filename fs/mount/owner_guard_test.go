package mount

import (
	"reflect"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestOwnerGuardRefusesEveryOtherCaller calls every request of the guard
// that carries a caller, as a stranger, as the owner and as root: the
// stranger is refused with EACCES before the file system hears of it; the
// owner and root reach it (the default file system answers ENOSYS). A
// request added to go-fuse's interface without a guard method would reach
// the file system for the stranger too and fail here.
func TestOwnerGuardRefusesEveryOtherCaller(t *testing.T) {
	const owner, stranger = 2101, 2102
	g := &ownerGuard{RawFileSystem: fuse.NewDefaultRawFileSystem(), uid: owner}
	v := reflect.ValueOf(g)
	iface := reflect.TypeOf((*fuse.RawFileSystem)(nil)).Elem()
	checked := 0
	for i := 0; i < iface.NumMethod(); i++ {
		name := iface.Method(i).Name
		m := v.MethodByName(name)
		call := func(uid uint32) (fuse.Status, bool) {
			mt := m.Type()
			args := make([]reflect.Value, mt.NumIn())
			hasCaller := false
			for j := range args {
				at := mt.In(j)
				args[j] = reflect.Zero(at)
				if at.Kind() == reflect.Pointer && at.Elem().Kind() == reflect.Struct {
					p := reflect.New(at.Elem())
					h := p.Elem()
					if at.Elem() != reflect.TypeOf(fuse.InHeader{}) {
						h = h.FieldByName("InHeader")
					}
					if h.IsValid() {
						h.Addr().Interface().(*fuse.InHeader).Caller.Uid = uid
						hasCaller = true
					}
					args[j] = p
				}
			}
			if !hasCaller || mt.NumOut() == 0 {
				return fuse.OK, false // RELEASE and the like: no answer to refuse with
			}
			out := m.Call(args)
			st, _ := out[len(out)-1].Interface().(fuse.Status)
			return st, true
		}
		st, ok := call(stranger)
		if !ok {
			continue
		}
		checked++
		if st != fuse.EACCES {
			t.Errorf("%s as a stranger: %v, want EACCES", name, st)
		}
		for _, uid := range []uint32{owner, 0} {
			if st, _ := call(uid); st == fuse.EACCES {
				t.Errorf("%s as %d: refused", name, uid)
			}
		}
	}
	if checked < 35 {
		t.Fatalf("only %d requests carry a caller; the guard is not what this test thinks", checked)
	}
}

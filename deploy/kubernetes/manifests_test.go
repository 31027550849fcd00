package kubernetes

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// decode decodes every document of every manifest strictly (an unknown
// or misspelt field fails) into its kind's API type.
func decode(t *testing.T) map[string]any {
	t.Helper()
	files, _ := filepath.Glob("*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests")
	}
	objs := map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj any
			switch tm.APIVersion + "/" + tm.Kind {
			case "v1/Namespace":
				obj = &corev1.Namespace{}
			case "v1/Service":
				obj = &corev1.Service{}
			case "v1/Secret":
				obj = &corev1.Secret{}
			case "apps/v1/DaemonSet":
				obj = &appsv1.DaemonSet{}
			case "apps/v1/StatefulSet":
				obj = &appsv1.StatefulSet{}
			default:
				t.Fatalf("%s: unexpected kind %s/%s", f, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s (%s): %v", f, tm.Kind, err)
			}
			name := obj.(metav1.Object).GetName()
			objs[tm.Kind+"/"+name] = obj
		}
	}
	return objs
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := decode(t)
	ds, ok := objs["DaemonSet/mindmount-serve"].(*appsv1.DaemonSet)
	if !ok {
		t.Fatalf("no DaemonSet mindmount-serve: %v", objs)
	}
	c := ds.Spec.Template.Spec.Containers[0]
	if c.SecurityContext == nil || !slices.Contains(c.SecurityContext.Capabilities.Add, "SYS_ADMIN") {
		t.Fatal("serve needs SYS_ADMIN to mount")
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m
	}
	if _, ok := mounts["/dev/fuse"]; !ok {
		t.Fatal("no /dev/fuse")
	}
	if m := mounts["/var/lib/mindmount/mnt"]; m.MountPropagation == nil || *m.MountPropagation != corev1.MountPropagationBidirectional {
		t.Fatal("the mounts' host path must propagate Bidirectional, or sandboxes see empty folders")
	}
	for _, a := range []string{"--cluster=http://etcd.mindmount.svc:2379", "--advertise=$(POD_IP):8080"} {
		if !slices.Contains(c.Args, a) {
			t.Fatalf("serve's args lack %s: %v", a, c.Args)
		}
	}
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			if _, ok := objs["Secret/"+v.Secret.SecretName]; !ok {
				t.Fatalf("volume %s names a Secret %s no manifest makes", v.Name, v.Secret.SecretName)
			}
		}
	}
	for _, k := range []string{"Service/mindmount", "Service/etcd", "StatefulSet/etcd", "Namespace/mindmount"} {
		if _, ok := objs[k]; !ok {
			t.Fatalf("no %s", k)
		}
	}
}

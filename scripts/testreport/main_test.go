package main

import (
	"strings"
	"testing"
)

// TestReport: a passing test's output is dropped, a failing test's and the
// package lines kept; a skip is listed with its reason.
func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:1: chatter\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:2: broken\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (0.00s)\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"output","Package":"p","Test":"TestC/mount","Output":"=== RUN   TestC/mount\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC/mount","Output":"    c_test.go:3: no /dev/fuse\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC/mount","Output":"--- SKIP: TestC/mount (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC/mount"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
	}, "\n")
	var out strings.Builder
	skips, err := report(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "chatter") || !strings.Contains(got, "broken") || !strings.Contains(got, "FAIL\tp") {
		t.Errorf("output:\n%s", got)
	}
	if len(skips) != 1 || skips[0].test != "p TestC/mount" || skips[0].reason != "c_test.go:3: no /dev/fuse" || !missingTool.MatchString(skips[0].reason) {
		t.Errorf("skips: %+v", skips)
	}
}

//go:build !unix

package memgraph

import "os"

// readMemoryFile reads the file at p for Update (portable version).
func readMemoryFile(p string) (data []byte, isDir, notRegular bool, err error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, false, false, err
	}
	if st.IsDir() {
		return nil, true, false, nil
	}
	if !st.Mode().IsRegular() {
		return nil, false, true, nil
	}
	data, err = os.ReadFile(p)
	return data, false, false, err
}

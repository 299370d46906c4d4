package app

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(math.MaxInt64)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name   string
		lookup func(string) (string, bool)
		file   string
		want   int64
		wantOK bool
	}{
		// 128 MiB × 0.75 = 96 MiB.
		{name: "container limit", lookup: noEnv, file: write("limited", "134217728\n"), want: 96 << 20, wantOK: true},
		{name: "GOMEMLIMIT wins", lookup: func(k string) (string, bool) { return "50MiB", k == "GOMEMLIMIT" }, file: write("limited-env", "134217728"), wantOK: false},
		{name: "no limit", lookup: noEnv, file: write("unlimited", "max\n"), wantOK: false},
		{name: "no cgroup file", lookup: noEnv, file: filepath.Join(dir, "absent"), wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := setMemoryLimit(tt.lookup, tt.file)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("setMemoryLimit = (%d, %v), want (%d, %v)", got, ok, tt.want, tt.wantOK)
			}
			if ok && debug.SetMemoryLimit(-1) != tt.want {
				t.Errorf("runtime memory limit = %d, want %d", debug.SetMemoryLimit(-1), tt.want)
			}
		})
	}
}

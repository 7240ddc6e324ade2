package localmode

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAddressInUse: a server whose address is taken says so and writes
// nothing, not even the data directory.
func TestRunAddressInUse(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dataDir := filepath.Join(t.TempDir(), "data")
	err = Run(t.Context(), Config{Addr: busy.Addr().String(), DataDir: dataDir})
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()+" is in use") {
		t.Errorf("Run: got %v, want an error saying %s is in use", err, busy.Addr())
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("data directory: got %v, want none created", err)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"127.0.0.1:3000", "http://127.0.0.1:3000"},
		{"[::1]:3000", "http://[::1]:3000"},
		{"0.0.0.0:3000", "http://localhost:3000"},
		{"[::]:3000", "http://localhost:3000"},
		{"192.0.2.7:8080", "http://192.0.2.7:8080"},
	}
	for _, tc := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseURL(addr); got != tc.want {
			t.Errorf("baseURL(%s): got %s, want %s", tc.addr, got, tc.want)
		}
	}
}

// TestUpdateDemoURL: a restart points demo.env at the address it listens
// on now, and gives a file of an older version the CLI's lines.
func TestUpdateDemoURL(t *testing.T) {
	t.Parallel()
	const ids = "KEY=cfk_a_b\nWORKFLOW_ID=W\n"
	tests := []struct{ name, before, want string }{
		{"same address", ids + "export CARDFLOW_API_KEY=cfk_a_b\nexport CARDFLOW_URL=http://127.0.0.1:4000\n", ids + "export CARDFLOW_API_KEY=cfk_a_b\nexport CARDFLOW_URL=http://127.0.0.1:4000\n"},
		{"new address", ids + "export CARDFLOW_API_KEY=cfk_a_b\nexport CARDFLOW_URL=http://127.0.0.1:3000\n", ids + "export CARDFLOW_API_KEY=cfk_a_b\nexport CARDFLOW_URL=http://127.0.0.1:4000\n"},
		{"older file", ids, ids + "export CARDFLOW_API_KEY=cfk_a_b\nexport CARDFLOW_URL=http://127.0.0.1:4000\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DemoEnvFile)
			if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := updateDemoURL(path, "http://127.0.0.1:4000"); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("demo.env: got %q, want %q", got, tc.want)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), DemoEnvFile)
	if err := updateDemoURL(missing, "http://127.0.0.1:4000"); err != nil {
		t.Errorf("missing demo.env: got %v, want nil", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("missing demo.env: got %v, want it left missing", err)
	}
}

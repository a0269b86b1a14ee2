package dsn_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/outflowhq/outflow/internal/mail/dsn"
)

// FuzzParse asserts that no input, however malformed, makes Parse panic, and that what it reports keeps its
// bounds.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.eml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("Content-Type: multipart/report; boundary=x\n\n--x\nContent-Type: message/delivery-status\n\nAction: failed\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, ok := dsn.Parse(raw)
		if !ok {
			return
		}
		if len(r.Recipients) > 50 {
			t.Fatalf("%d recipients kept, more than the bound", len(r.Recipients))
		}
		for _, rc := range r.Recipients {
			if len(rc.Diagnostic) > 512 {
				t.Fatalf("diagnostic of %d bytes kept, more than the bound", len(rc.Diagnostic))
			}
		}
	})
}

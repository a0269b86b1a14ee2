// Package geotest writes small MaxMind DB files for tests with MaxMind's own writer (mmdbwriter), so the geo
// lookup is exercised through the real reader against a real database, never a stand-in.
package geotest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Write builds a database of type dbType (such as "GeoLite2-Country") mapping each network (CIDR) to the
// country code given, in t's temporary directory, and returns its path. Reserved networks (loopback, private)
// are allowed, so a test's own 127.0.0.1 can have a country.
func Write(t testing.TB, dbType string, countries map[string]string) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType, RecordSize: 24, IncludeReservedNetworks: true})
	if err != nil {
		t.Fatalf("geotest: %v", err)
	}
	for cidr, code := range countries {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatalf("geotest: %v", err)
		}
		record := mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(code)}}
		if err := tree.Insert(network, record); err != nil {
			t.Fatalf("geotest: %v", err)
		}
	}
	path := filepath.Join(t.TempDir(), dbType+".mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("geotest: %v", err)
	}
	defer f.Close()
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatalf("geotest: %v", err)
	}
	return path
}

package engagement

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"
)

// Geo resolves client addresses to countries through an operator-supplied MaxMind DB file (GeoLite2 or
// GeoIP2 Country or City, or any database of that shape). A nil *Geo knows no country.
type Geo struct {
	db *maxminddb.Reader
}

// OpenGeo opens the database at path; an empty path is no database (nil, every country unknown). A file that
// does not open as a MaxMind DB, or whose type says it holds no countries, is an error naming the setting, so
// a misconfigured deployment fails at start rather than showing every reader as unknown.
func OpenGeo(path string) (*Geo, error) {
	if path == "" {
		return nil, nil
	}
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("OUTFLOW_GEOIP_DB %s: not a readable MaxMind DB file: %w", path, err)
	}
	kind := strings.ToLower(db.Metadata.DatabaseType)
	if !strings.Contains(kind, "country") && !strings.Contains(kind, "city") && !strings.Contains(kind, "enterprise") {
		_ = db.Close()
		return nil, fmt.Errorf("OUTFLOW_GEOIP_DB %s: database type %q holds no countries; use a GeoLite2 or GeoIP2 Country or City database",
			path, db.Metadata.DatabaseType)
	}
	return &Geo{db: db}, nil
}

// Country is the ISO 3166-1 alpha-2 code of ip's country, "" when unknown (no database, no record, or a
// record without a country).
func (g *Geo) Country(ip netip.Addr) string {
	if g == nil || !ip.IsValid() {
		return ""
	}
	var code string
	if err := g.db.Lookup(ip.Unmap()).DecodePath(&code, "country", "iso_code"); err != nil || len(code) != 2 {
		return ""
	}
	return strings.ToUpper(code)
}

// Close releases the database file.
func (g *Geo) Close() error {
	if g == nil {
		return nil
	}
	return g.db.Close()
}

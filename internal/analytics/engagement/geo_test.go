package engagement_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/engagement"
	"github.com/outflowhq/outflow/internal/testkit/geotest"
)

func TestGeoResolvesCountriesFromACountryDatabase(t *testing.T) {
	path := geotest.Write(t, "GeoLite2-Country", map[string]string{"81.2.69.0/24": "GB", "2001:db8::/32": "DE", "127.0.0.0/8": "nl"})
	geo, err := engagement.OpenGeo(path)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, geo.Close()) })
	require.Equal(t, "GB", geo.Country(netip.MustParseAddr("81.2.69.142")))
	require.Equal(t, "DE", geo.Country(netip.MustParseAddr("2001:db8::1")))
	require.Equal(t, "NL", geo.Country(netip.MustParseAddr("127.0.0.1")), "codes are upper case")
	require.Equal(t, "NL", geo.Country(netip.MustParseAddr("::ffff:127.0.0.1")), "an IPv4-mapped address is its IPv4 address")
	require.Empty(t, geo.Country(netip.MustParseAddr("8.8.8.8")), "no record: unknown")
	require.Empty(t, geo.Country(netip.Addr{}), "no address: unknown")
}

func TestGeoWithoutADatabaseKnowsNoCountry(t *testing.T) {
	geo, err := engagement.OpenGeo("")
	require.NoError(t, err)
	require.Nil(t, geo)
	require.Empty(t, geo.Country(netip.MustParseAddr("81.2.69.142")))
	require.NoError(t, geo.Close())
}

func TestGeoRefusesAFileThatIsNotACountryDatabase(t *testing.T) {
	_, err := engagement.OpenGeo(filepath.Join(t.TempDir(), "missing.mmdb"))
	require.ErrorContains(t, err, "OUTFLOW_GEOIP_DB")

	junk := filepath.Join(t.TempDir(), "junk.mmdb")
	require.NoError(t, os.WriteFile(junk, []byte("not a database"), 0o600))
	_, err = engagement.OpenGeo(junk)
	require.ErrorContains(t, err, "not a readable MaxMind DB file")

	asn := geotest.Write(t, "GeoLite2-ASN", map[string]string{"81.2.69.0/24": "GB"})
	_, err = engagement.OpenGeo(asn)
	require.ErrorContains(t, err, `database type "GeoLite2-ASN" holds no countries`)

	city, err := engagement.OpenGeo(geotest.Write(t, "GeoIP2-City", map[string]string{"81.2.69.0/24": "GB"}))
	require.NoError(t, err, "a city database carries countries too")
	require.NoError(t, city.Close())
}

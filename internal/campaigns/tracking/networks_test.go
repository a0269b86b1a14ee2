package tracking_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

func TestEmbeddedNetworkListsLoadAndAnswerLookups(t *testing.T) {
	t.Parallel()
	n, err := tracking.LoadNetworks()
	require.NoError(t, err)

	eop := n.Lookup(netip.MustParseAddr("40.107.22.33"), "Mozilla/5.0")
	require.Equal(t, tracking.Source{Scanner: "Microsoft Exchange Online Protection"}, eop,
		"EOP sits inside Azure's 40.64.0.0/10: the recognised scanner wins over the probable one")
	require.True(t, eop.RecognisedScanner())

	azure := n.Lookup(netip.MustParseAddr("40.112.1.1"), "Mozilla/5.0")
	require.Equal(t, tracking.Source{Scanner: "Microsoft Azure", ScannerProbable: true}, azure)
	require.False(t, azure.RecognisedScanner())

	require.Equal(t, "Microsoft Exchange Online Protection",
		n.Lookup(netip.MustParseAddr("2a01:111:f403:c200::1"), "").Scanner, "IPv6")
	require.Equal(t, "Proofpoint", n.Lookup(netip.MustParseAddr("::ffff:67.231.150.9"), "").Scanner,
		"an IPv4-mapped IPv6 address is looked up as IPv4")

	require.Equal(t, tracking.Source{}, n.Lookup(netip.MustParseAddr("192.0.2.7"), "Mozilla/5.0"), "a miss")
	require.Equal(t, tracking.Source{}, n.Lookup(netip.MustParseAddr("2001:db8::1"), "Mozilla/5.0"), "an IPv6 miss")
	require.Equal(t, tracking.Source{}, n.Lookup(netip.Addr{}, ""), "no address at all")

	gmail := n.Lookup(netip.MustParseAddr("192.0.2.7"),
		"Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)")
	require.Equal(t, "Gmail image proxy", gmail.PrivacyProxy)
	yahoo := n.Lookup(netip.Addr{}, "yahoomailproxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html")
	require.Equal(t, "Yahoo Mail proxy", yahoo.PrivacyProxy, "markers match case-insensitively")
}

func TestTheLongestPrefixDecidesAndProxyNetworksMatch(t *testing.T) {
	t.Parallel()
	n, err := tracking.ParseNetworks(
		"10.0.0.0/8 Wide\n10.1.0.0/16 Narrow # comment\n\n2001:db8::/32 Six\n",
		"",
		"198.51.100.0/24 Some proxy\nua:ProxyBot Bot proxy\n")
	require.NoError(t, err)
	require.Equal(t, "Narrow", n.Lookup(netip.MustParseAddr("10.1.2.3"), "").Scanner)
	require.Equal(t, "Wide", n.Lookup(netip.MustParseAddr("10.2.2.3"), "").Scanner)
	require.Equal(t, "Six", n.Lookup(netip.MustParseAddr("2001:db8:ffff::1"), "").Scanner)
	require.Empty(t, n.Lookup(netip.MustParseAddr("11.0.0.1"), "").Scanner)
	require.Equal(t, "Some proxy", n.Lookup(netip.MustParseAddr("198.51.100.200"), "").PrivacyProxy)
	require.Equal(t, "Bot proxy", n.Lookup(netip.MustParseAddr("192.0.2.1"), "x ProxyBot/1").PrivacyProxy)
}

func TestMalformedNetworkListsFailToLoad(t *testing.T) {
	t.Parallel()
	for name, lists := range map[string][3]string{
		"not a prefix":        {"10.0.0.300/8 X\n", "", ""},
		"host bits set":       {"10.0.0.1/8 X\n", "", ""},
		"no name":             {"10.0.0.0/8\n", "", ""},
		"listed twice":        {"", "10.0.0.0/8 A\n10.0.0.0/8 B\n", ""},
		"marker outside list": {"ua:Bot X\n", "", ""},
		"empty marker":        {"", "", "ua: X\n"},
	} {
		_, err := tracking.ParseNetworks(lists[0], lists[1], lists[2])
		require.Error(t, err, name)
	}
}

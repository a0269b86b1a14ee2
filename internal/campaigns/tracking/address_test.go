package tracking

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIPHasherHashesAnAddressUnderTheDeploymentSecretWithoutRevealingIt(t *testing.T) {
	t.Parallel()
	h, err := NewIPHasher([]byte("deployment secret"))
	require.NoError(t, err)
	other, err := NewIPHasher([]byte("another deployment"))
	require.NoError(t, err)
	ip := netip.MustParseAddr("203.0.113.7")

	require.Equal(t, h.Hash(ip), h.Hash(netip.MustParseAddr("::ffff:203.0.113.7")), "a mapped address hashes as itself")
	require.NotEqual(t, h.Hash(ip), h.Hash(netip.MustParseAddr("203.0.113.8")))
	require.NotEqual(t, h.Hash(ip), other.Hash(ip), "the hash depends on the deployment secret")
	require.NotContains(t, h.Hash(ip), "203.0.113")
	require.Len(t, h.Hash(ip), 22)
	require.Empty(t, h.Hash(netip.Addr{}))
	_, err = NewIPHasher(nil)
	require.Error(t, err)
}

func TestSourceNetworkKeepsOnlyTheSlash24OrSlash48(t *testing.T) {
	t.Parallel()
	require.Equal(t, "203.0.113.0/24", SourceNetwork(netip.MustParseAddr("203.0.113.7")))
	require.Equal(t, "203.0.113.0/24", SourceNetwork(netip.MustParseAddr("::ffff:203.0.113.7")))
	require.Equal(t, "2001:db8:1::/48", SourceNetwork(netip.MustParseAddr("2001:db8:1:2::5")))
	require.Empty(t, SourceNetwork(netip.Addr{}))
}

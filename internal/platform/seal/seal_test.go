package seal_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/seal"
)

func TestSealOpenRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	old, err := seal.NewKeyring(oldKey)
	require.NoError(t, err)
	sealed := old.Seal([]byte("JBSWY3DPEHPK3PXP"), "totp:u1")
	require.NotContains(t, string(sealed), "JBSWY3DPEHPK3PXP")

	rotated, err := seal.NewKeyring(newKey, oldKey)
	require.NoError(t, err)
	plain, err := rotated.Open(sealed, "totp:u1")
	require.NoError(t, err)
	require.Equal(t, "JBSWY3DPEHPK3PXP", string(plain), "values sealed with a retired key still open")

	_, err = rotated.Open(sealed, "totp:u2")
	require.Error(t, err, "the context binds a value to its row")

	fresh := rotated.Seal([]byte("x"), "c")
	_, err = old.Open(fresh, "c")
	require.ErrorIs(t, err, seal.ErrUnknownKey, "new values use the newest key")

	sealed[len(sealed)-1] ^= 1
	_, err = rotated.Open(sealed, "totp:u1")
	require.Error(t, err, "tampering is detected")
}

package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSignMatchesTheSpecifiedScheme(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_795_000_000, 0)
	body := []byte(`{"id":"e1","event_type":"contact.created"}`)
	m := hmac.New(sha256.New, []byte("whsec_abc"))
	m.Write([]byte(strconv.FormatInt(at.Unix(), 10) + "." + string(body)))
	require.Equal(t, "t=1795000000,v1="+hex.EncodeToString(m.Sum(nil)), Sign("whsec_abc", at, body))
}

func TestVerifySignature(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_795_000_000, 0)
	body := []byte(`{"id":"e1"}`)
	good := Sign("whsec_abc", now, body)
	require.NoError(t, verifyAt("whsec_abc", good, body, 0, now.Add(299*time.Second)))
	require.NoError(t, verifyAt("whsec_abc", good, body, time.Minute, now.Add(-59*time.Second)))
	// Unknown schemes are ignored; any of several v1 values may match (secret rotation).
	other := Sign("whsec_old", now, body)
	require.NoError(t, verifyAt("whsec_abc", good+",v0=deadbeef,"+other[len("t=1795000000,"):], body, 0, now))
	require.NoError(t, verifyAt("whsec_abc", "t=1795000000,"+other[len("t=1795000000,"):]+","+good[len("t=1795000000,"):], body, 0, now))

	cases := map[string]struct {
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		"stale (tolerance 0 is the default)": {good, body, now.Add(301 * time.Second), ErrTimestamp},
		"future":                             {good, body, now.Add(-301 * time.Second), ErrTimestamp},
		"other secret":                       {other, body, now, ErrMismatch},
		"body changed":                       {good, []byte(`{"id":"e2"}`), now, ErrMismatch},
		"no v1":                              {"t=1795000000,v0=ab", body, now, ErrNoSignature},
		"no timestamp":                       {good[len("t=1795000000,"):], body, now, ErrMalformedHeader},
		"bad hex":                            {"t=1795000000,v1=zz", body, now, ErrMalformedHeader},
		"two timestamps":                     {"t=1,t=2," + good[len("t=1795000000,"):], body, now, ErrMalformedHeader},
		"empty":                              {"", body, now, ErrMalformedHeader},
	}
	for name, c := range cases {
		require.ErrorIs(t, verifyAt("whsec_abc", c.header, c.body, 0, c.now), c.want, name)
	}
}

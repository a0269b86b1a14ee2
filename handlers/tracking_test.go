package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"image/gif"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// trackingGet fetches a tracking path the way a mail client does, without following redirects.
func trackingGet(t *testing.T, env *apitest.Env, path, userAgent string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, env.Server.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("User-Agent", userAgent)
	client := *env.Server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// trackingTokens signs tokens as the deployment does (its secret key).
func trackingTokens(t *testing.T, env *apitest.Env) *tracking.Signer {
	t.Helper()
	s, err := tracking.NewSigner(env.Config.SecretKey)
	require.NoError(t, err)
	return s
}

// trackingRows lists the stored tracking events (read past RLS) as "org task kind ua link url ip_hash network".
func trackingRows(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Tracking.Flush(ctx))
	rows, err := env.DB.OwnerPool(t).Query(ctx, `SELECT organization_id, task_id, kind, user_agent, coalesce(link_index, -1),
		coalesce(url, ''), ip_hash, source_network FROM tracking_events ORDER BY at, id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var org, task uuid.UUID
		var kind, ua, url, hash, network string
		var link int
		require.NoError(t, rows.Scan(&org, &task, &kind, &ua, &link, &url, &hash, &network))
		got = append(got, fmt.Sprint(org, task, kind, ua, link, url, hash, network))
	}
	require.NoError(t, rows.Err())
	return got
}

func TestTrackingPixelAnswersTheSameNoStoreGIFToEveryTokenAndRecordsOnlyValidOpens(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := env.Bootstrap(t, "acme").OrganizationID
	signer := trackingTokens(t, env)
	task := uuid.New()
	open, err := signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: org, TaskID: task})
	require.NoError(t, err)
	click, err := signer.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, URL: "https://example.com/"})
	require.NoError(t, err)
	other, err := tracking.NewSigner([]byte("another deployment's secret key"))
	require.NoError(t, err)
	forged, err := other.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: org, TaskID: task})
	require.NoError(t, err)

	var first []byte
	for _, token := range []string{open, open[:len(open)-3], forged, click, "not-a-token"} {
		resp, body := trackingGet(t, env, "/t/o/"+token, "Mozilla/5.0 (Macintosh)")
		require.Equal(t, http.StatusOK, resp.StatusCode, token)
		require.Equal(t, "image/gif", resp.Header.Get("Content-Type"), token)
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), token)
		img, err := gif.Decode(bytes.NewReader(body))
		require.NoError(t, err, "the pixel is a GIF")
		require.Equal(t, 1, img.Bounds().Dx())
		require.Equal(t, 1, img.Bounds().Dy())
		_, _, _, alpha := img.At(0, 0).RGBA()
		require.Zero(t, alpha, "the pixel is transparent")
		if first == nil {
			first = body
		}
		require.Equal(t, first, body, "every request gets the same bytes")
	}

	hasher, err := tracking.NewIPHasher(env.Config.SecretKey)
	require.NoError(t, err)
	loopback := netip.MustParseAddr("127.0.0.1")
	require.Equal(t, []string{fmt.Sprint(org, task, "open", "Mozilla/5.0 (Macintosh)", -1, "", hasher.Hash(loopback), "127.0.0.0/24")},
		trackingRows(t, env), "only the valid open token is recorded, with the keyed hash of the client address")
}

func TestTrackingClickRedirectsAValidTokenToItsURLAndAnswers404ToAnyOther(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	org := env.Bootstrap(t, "acme").OrganizationID
	signer := trackingTokens(t, env)
	task := uuid.New()
	target := "https://shop.example.com/spring?utm_source=outflow&utm_medium=email&q=a%20b#offer"
	click, err := signer.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, LinkIndex: 2, URL: target})
	require.NoError(t, err)
	open, err := signer.Sign(tracking.Token{Kind: tracking.KindOpen, OrganizationID: org, TaskID: task})
	require.NoError(t, err)
	other, err := tracking.NewSigner([]byte("another deployment's secret key"))
	require.NoError(t, err)
	forged, err := other.Sign(tracking.Token{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, URL: "https://evil.example/"})
	require.NoError(t, err)

	resp, _ := trackingGet(t, env, "/t/c/"+click, "Mozilla/5.0 (Windows NT 10.0)")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	location, ticket, _ := strings.Cut(resp.Header.Get("Location"), "&ofclid=")
	ticket, fragment, _ := strings.Cut(ticket, "#")
	require.Equal(t, target, location+"#"+fragment, "the redirect goes to the exact URL the token carries, with the ticket")
	_, err = signer.Parse(ticket, tracking.KindTicket)
	require.NoError(t, err)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	for name, token := range map[string]string{"forged": forged, "truncated": click[:len(click)-5], "open token": open, "garbage": "x"} {
		resp, body := trackingGet(t, env, "/t/c/"+token, "Mozilla/5.0")
		require.Equal(t, http.StatusNotFound, resp.StatusCode, name)
		require.Empty(t, resp.Header.Get("Location"), name)
		require.Equal(t, "application/json", strings.Split(resp.Header.Get("Content-Type"), ";")[0], name)
		require.Contains(t, string(body), `"code":"link_not_found"`, name)
		require.Contains(t, string(body), `"request_id":"`, name)
		require.Contains(t, string(body), "not a valid tracked link", name)
	}

	got := trackingRows(t, env)
	hasher, err := tracking.NewIPHasher(env.Config.SecretKey)
	require.NoError(t, err)
	require.Equal(t, []string{fmt.Sprint(org, task, "click", "Mozilla/5.0 (Windows NT 10.0)", 2, target,
		hasher.Hash(netip.MustParseAddr("127.0.0.1")), "127.0.0.0/24")}, got, "only the valid click is recorded")
	var raw int
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(context.Background(),
		`SELECT count(*) FROM tracking_events e WHERE e::text LIKE '%127.0.0.1%'`).Scan(&raw))
	require.Zero(t, raw, "the raw client address is stored in no column")
}

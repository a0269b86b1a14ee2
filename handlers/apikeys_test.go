package handlers_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// newKey creates a key through the API and returns it with its secret.
func newKey(t testing.TB, c *api.Client, req api.CreateAPIKey) *api.APIKeyWithSecret {
	t.Helper()
	k, err := c.APIKeysCreate(context.Background(), &req, api.APIKeysCreateParams{})
	require.NoError(t, err)
	return k
}

func TestAPIKeyPermissionCatalog(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	cat, err := env.Client(t, boot.APIKey).APIKeysListPermissions(ctx)
	require.NoError(t, err)
	require.Len(t, cat.Permissions, 25)
	var all, reads int64
	for i, p := range cat.Permissions {
		require.Equal(t, int64(1)<<i, p.Value, p.Name)
		require.NotEmpty(t, p.Description)
		all |= p.Value
		if p.Category == api.APIPermissionCategoryRead {
			reads |= p.Value
		}
	}
	require.Equal(t, "READ_EMAILS", cat.Permissions[0].Name)
	require.Equal(t, "MANAGE_MAILBOX_PROVISIONING", cat.Permissions[24].Name)
	require.Equal(t, all, cat.Presets.FullAccess)
	require.Equal(t, reads, cat.Presets.ReadOnly)
	require.NotZero(t, reads&int64(auth.ReadAuditLogs))
	require.Zero(t, reads&int64(auth.WriteContacts))

	// A session with manage_api_keys reads it too; a key without API_KEYS does not.
	owner := env.Client(t, env.SignIn(t, "owner@acme.example", apitest.Password).AccessToken)
	_, err = owner.APIKeysListPermissions(ctx)
	require.NoError(t, err)
	_, err = env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadEmails)).APIKeysListPermissions(ctx)
	requireAPIError(t, err, 403, "missing_scope")
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)

	created := newKey(t, admin, api.CreateAPIKey{Name: "  CRM sync  ", Description: api.NewOptString("nightly"),
		Permissions: int64(auth.ReadContacts | auth.WriteContacts), AllowedIps: []string{"127.0.0.1", "10.0.0.0/8", "::ffff:127.0.0.1"}})
	require.True(t, auth.IsAPIKey(created.Secret))
	require.Equal(t, "CRM sync", created.Name)
	require.Equal(t, created.Secret[:len(created.KeyPrefix)], created.KeyPrefix)
	require.Equal(t, created.Secret[len(created.Secret)-4:], created.KeySuffix)
	require.Equal(t, []string{"127.0.0.1/32", "10.0.0.0/8"}, created.AllowedIps)
	require.Equal(t, 0, created.RateLimitPerMinute)
	require.Equal(t, api.APIKeyStatusActive, created.Status)
	require.Equal(t, boot.UserID, created.UserID)

	// Only the hash, prefix and suffix are stored.
	var stored []byte
	var found int
	owner := env.DB.OwnerPool(t)
	require.NoError(t, owner.QueryRow(ctx, `SELECT key_hash FROM api_keys WHERE id = $1`, created.ID).Scan(&stored))
	sum := sha256.Sum256([]byte(created.Secret))
	require.Equal(t, sum[:], stored)
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM api_keys k WHERE k::text LIKE '%' || $1 || '%'`, created.Secret[12:40]).Scan(&found))
	require.Zero(t, found, "the secret is not stored")

	got, err := admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, created.KeyPrefix, got.KeyPrefix)
	require.Equal(t, "nightly", got.Description.Value)

	// The new key works within its scopes.
	crm := env.Client(t, created.Secret)
	_, err = crm.APIKeysList(ctx, api.APIKeysListParams{})
	requireAPIError(t, err, 403, "missing_scope")

	// Patch: 0 restores the default rate; every listed field changes.
	upd, err := admin.APIKeysUpdate(ctx, &api.UpdateAPIKey{Name: api.NewOptString("CRM"), RateLimitPerMinute: api.NewOptInt(120),
		Permissions: api.NewOptInt64(int64(auth.ReadContacts)), AllowedIps: []string{}}, api.APIKeysUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, "CRM", upd.Name)
	require.Equal(t, 120, upd.RateLimitPerMinute)
	require.Equal(t, int64(auth.ReadContacts), upd.Permissions)
	require.Empty(t, upd.AllowedIps)
	require.Equal(t, "nightly", upd.Description.Value, "fields not sent are kept")
	upd, err = admin.APIKeysUpdate(ctx, &api.UpdateAPIKey{RateLimitPerMinute: api.NewOptInt(0)}, api.APIKeysUpdateParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, 0, upd.RateLimitPerMinute)

	// Permanent delete refuses a key that can still authenticate.
	_, err = admin.APIKeysDelete(ctx, api.APIKeysDeleteParams{ID: created.ID})
	requireAPIError(t, err, 409, "api_key_active")

	// Revocation is immediate, stores the default reason, and is idempotent.
	res, err := admin.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, api.APIKeyRevokeResultStatusRevoked, res.Status)
	_, err = crm.APIKeysListPermissions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	_, err = admin.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: created.ID, Reason: api.NewOptString("later")})
	require.NoError(t, err)
	got, err = admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, api.APIKeyStatusRevoked, got.Status)
	require.Equal(t, "Revoked by user", got.RevokedReason.Value)
	require.True(t, got.RevokedAt.Set && !got.RevokedAt.Null)

	// Its request log goes with it.
	require.NoError(t, env.Usage.Flush(ctx))
	del, err := admin.APIKeysDelete(ctx, api.APIKeysDeleteParams{ID: created.ID})
	require.NoError(t, err)
	require.Equal(t, api.APIKeyDeleteResultStatusDeleted, del.Status)
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM api_key_usage_logs WHERE api_key_id = $1`, created.ID).Scan(&found))
	require.Zero(t, found)
	_, err = admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: created.ID})
	requireAPIError(t, err, 404, "not_found")

	// One audit entry per change.
	actions := orgAuditActions(t, env, boot.OrganizationID)
	require.Equal(t, []string{"api_key.created", "api_key.updated", "api_key.updated", "api_key.revoked", "api_key.deleted"}, actions[len(actions)-5:])
}

func TestAPIKeyValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)
	bad := []struct {
		req  api.CreateAPIKey
		code string
	}{
		{api.CreateAPIKey{Name: "x", Permissions: 1 << 40}, "unknown_permissions"},
		{api.CreateAPIKey{Name: "x", Permissions: -1}, "unknown_permissions"},
		{api.CreateAPIKey{Name: "   ", Permissions: 1}, "invalid_name"},
		{api.CreateAPIKey{Name: "x", Permissions: 1, AllowedIps: []string{"10.0.0.300"}}, "invalid_allowed_ips"},
		{api.CreateAPIKey{Name: "x", Permissions: 1, RateLimitPerMinute: api.NewOptInt(10001)}, "invalid_rate_limit"},
		{api.CreateAPIKey{Name: "x", Permissions: 1, ExpiresAt: api.NewOptDateTime(time.Now().Add(-time.Minute))}, "invalid_expires_at"},
	}
	for _, b := range bad {
		_, err := admin.APIKeysCreate(ctx, &b.req, api.APIKeysCreateParams{})
		requireAPIError(t, err, 400, b.code)
	}
	_, err := admin.APIKeysUpdate(ctx, &api.UpdateAPIKey{Permissions: api.NewOptInt64(1 << 30)}, api.APIKeysUpdateParams{ID: boot.APIKeyID})
	requireAPIError(t, err, 400, "unknown_permissions")
	_, err = admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")

	// A key holding API_KEYS cannot mint or widen a key past its own scopes or mailboxes.
	limited := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.APIKeys|auth.ReadContacts))
	_, err = limited.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "wider", Permissions: int64(auth.FullAccess)}, api.APIKeysCreateParams{})
	requireAPIError(t, err, 403, "permission_escalation")
	ok := newKey(t, limited, api.CreateAPIKey{Name: "narrower", Permissions: int64(auth.ReadContacts)})
	_, err = limited.APIKeysUpdate(ctx, &api.UpdateAPIKey{Permissions: api.NewOptInt64(int64(auth.SendCampaigns))}, api.APIKeysUpdateParams{ID: ok.ID})
	requireAPIError(t, err, 403, "permission_escalation")

	mailbox := uuid.New()
	scoped := newKey(t, admin, api.CreateAPIKey{Name: "one mailbox", Permissions: int64(auth.FullAccess), AllowedEmailAccounts: []uuid.UUID{mailbox, mailbox}})
	require.Equal(t, []uuid.UUID{mailbox}, scoped.AllowedEmailAccounts)
	scopedClient := env.Client(t, scoped.Secret)
	_, err = scopedClient.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "any mailbox", Permissions: 1}, api.APIKeysCreateParams{})
	requireAPIError(t, err, 403, "permission_escalation")
	newKey(t, scopedClient, api.CreateAPIKey{Name: "same mailbox", Permissions: 1, AllowedEmailAccounts: []uuid.UUID{mailbox}})
}

func TestAPIKeyListPaging(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)
	var made []uuid.UUID
	for i := range 4 {
		made = append(made, newKey(t, admin, api.CreateAPIKey{Name: "k" + strconv.Itoa(i), Permissions: 1}).ID)
	}
	// Out-of-range limits fall back to the default instead of failing.
	for _, limit := range []int{0, -3, 101} {
		page, err := admin.APIKeysList(ctx, api.APIKeysListParams{Limit: api.NewOptInt(limit)})
		require.NoError(t, err)
		require.Len(t, page.Data, 5, "limit %d", limit)
		require.False(t, page.Pagination.HasMore)
	}
	// Newest first, two at a time, across pages.
	var seen []uuid.UUID
	params := api.APIKeysListParams{Limit: api.NewOptInt(2)}
	for {
		page, err := admin.APIKeysList(ctx, params)
		require.NoError(t, err)
		for _, k := range page.Data {
			seen = append(seen, k.ID)
		}
		if !page.Pagination.HasMore {
			break
		}
		params.Cursor = api.NewOptString(page.Pagination.NextCursor.Value)
	}
	require.Equal(t, []uuid.UUID{made[3], made[2], made[1], made[0], boot.APIKeyID}, seen)
	_, err := admin.APIKeysList(ctx, api.APIKeysListParams{Cursor: api.NewOptString("garbage")})
	requireAPIError(t, err, 400, "invalid_cursor")

	// Another organization's key is not there.
	other := env.Bootstrap(t, "globex")
	_, err = env.Client(t, other.APIKey).APIKeysGet(ctx, api.APIKeysGetParams{ID: made[0]})
	requireAPIError(t, err, 404, "not_found")
	_, err = env.Client(t, other.APIKey).APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: made[0]})
	requireAPIError(t, err, 404, "not_found")
}

func TestAPIKeyExpiryIsJudgedAtReadTime(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)
	k := newKey(t, admin, api.CreateAPIKey{Name: "temp", Permissions: int64(auth.APIKeys), ExpiresAt: api.NewOptDateTime(time.Now().Add(time.Hour))})
	temp := env.Client(t, k.Secret)
	_, err := temp.APIKeysListPermissions(ctx)
	require.NoError(t, err)

	_, err = env.DB.OwnerPool(t).Exec(ctx, `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, k.ID)
	require.NoError(t, err)
	_, err = temp.APIKeysListPermissions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	got, err := admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: k.ID})
	require.NoError(t, err)
	require.Equal(t, api.APIKeyStatusActive, got.Status, "an expired key still reads active")
	sum, err := admin.APIKeysUsageSummary(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, sum.ExpiredKeys)
	require.Equal(t, 1, sum.ActiveKeys)
	// It can no longer authenticate, so it may be deleted without revoking it first.
	_, err = admin.APIKeysDelete(ctx, api.APIKeysDeleteParams{ID: k.ID})
	require.NoError(t, err)
}

func TestAPIKeyIPAllowList(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)
	elsewhere := newKey(t, admin, api.CreateAPIKey{Name: "office", Permissions: int64(auth.APIKeys), AllowedIps: []string{"203.0.113.0/24", "2001:db8::/32"}})
	_, err := env.Client(t, elsewhere.Secret).APIKeysListPermissions(ctx)
	requireAPIError(t, err, 403, "ip_not_allowed")
	here := newKey(t, admin, api.CreateAPIKey{Name: "loopback", Permissions: int64(auth.APIKeys), AllowedIps: []string{"127.0.0.0/8"}})
	_, err = env.Client(t, here.Secret).APIKeysListPermissions(ctx)
	require.NoError(t, err)
	// Widening the list lets the first key in.
	_, err = admin.APIKeysUpdate(ctx, &api.UpdateAPIKey{AllowedIps: []string{"203.0.113.0/24", "127.0.0.1"}}, api.APIKeysUpdateParams{ID: elsewhere.ID})
	require.NoError(t, err)
	_, err = env.Client(t, elsewhere.Secret).APIKeysListPermissions(ctx)
	require.NoError(t, err)
}

func TestAPIKeyRateLimitAnswers429WithRetryAfter(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	k := newKey(t, env.Client(t, boot.APIKey), api.CreateAPIKey{Name: "slow", Permissions: int64(auth.APIKeys), RateLimitPerMinute: api.NewOptInt(3)})
	for range 3 {
		resp := env.Do(t, http.MethodGet, "/v1/api-keys/permissions", k.Secret, nil, nil)
		require.Equal(t, 200, resp.StatusCode)
	}
	resp := env.Do(t, http.MethodGet, "/v1/api-keys/permissions", k.Secret, nil, nil)
	require.Equal(t, 429, resp.StatusCode)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, retry >= 1 && retry <= 60, retry)
	_, err = env.Client(t, k.Secret).APIKeysListPermissions(ctx)
	requireAPIError(t, err, 429, "rate_limited")
	// The limit is per key: the bootstrap key is unaffected.
	_, err = env.Client(t, boot.APIKey).APIKeysListPermissions(ctx)
	require.NoError(t, err)
}

// TestAPIKeyRateLimitHoldsAcrossInstances sends a burst through two server instances sharing one database:
// exactly the key's limit passes in the window, whichever instance served each request.
func TestAPIKeyRateLimitHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	boot := env.Bootstrap(t, "acme")
	const limit = 25
	k := newKey(t, env.Client(t, boot.APIKey), api.CreateAPIKey{Name: "burst", Permissions: int64(auth.APIKeys), RateLimitPerMinute: api.NewOptInt(limit)})
	second := env.Instance(t)
	urls := []string{env.Server.URL, second.URL}
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	for i := range 80 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, urls[i%2]+"/v1/api-keys/permissions", nil)
			req.Header.Set("Authorization", "Bearer "+k.Secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 200:
				ok.Add(1)
			case 429:
				limited.Add(1)
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(limit), ok.Load())
	require.Equal(t, int64(80-limit), limited.Load())
}

func TestAPIKeyUsageIsLoggedAndReported(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	admin := env.Client(t, boot.APIKey)
	k := newKey(t, admin, api.CreateAPIKey{Name: "reporting", Permissions: int64(auth.APIKeys)})
	reporter := env.Client(t, k.Secret)
	for range 3 {
		_, err := reporter.APIKeysGet(ctx, api.APIKeysGetParams{ID: k.ID})
		require.NoError(t, err)
	}
	_, err := reporter.APIKeysGet(ctx, api.APIKeysGetParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	resp := env.Do(t, http.MethodGet, "/v1/api-keys/permissions", k.Secret, nil, http.Header{"User-Agent": {"reporting-bot/1.0"}})
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, env.Usage.Flush(ctx))

	logs, err := admin.APIKeysListLogs(ctx, api.APIKeysListLogsParams{ID: k.ID})
	require.NoError(t, err)
	require.Len(t, logs.Data, 5)
	newest := logs.Data[0]
	require.Equal(t, "/api-keys/permissions", newest.Endpoint)
	require.Equal(t, "GET", newest.Method)
	require.Equal(t, "127.0.0.1", newest.IPAddress)
	require.Equal(t, "reporting-bot/1.0", newest.UserAgent)
	require.Equal(t, 200, newest.ResponseCode)
	require.Equal(t, 404, logs.Data[1].ResponseCode)
	require.Equal(t, "/api-keys/{id}", logs.Data[1].Endpoint, "the route template, never the concrete path")

	// Paging through the log, 2 at a time.
	page, err := admin.APIKeysListLogs(ctx, api.APIKeysListLogsParams{ID: k.ID, Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.True(t, page.Pagination.HasMore)
	page2, err := admin.APIKeysListLogs(ctx, api.APIKeysListLogsParams{ID: k.ID, Limit: api.NewOptInt(2), Cursor: api.NewOptString(page.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.Equal(t, logs.Data[2].ID, page2.Data[0].ID)
	for _, bad := range []int{0, 201} {
		_, err = admin.APIKeysListLogs(ctx, api.APIKeysListLogsParams{ID: k.ID, Limit: api.NewOptInt(bad)})
		require.Error(t, err, "limit %d", bad)
	}
	require.Equal(t, 400, orgRawStatus(t, env, "GET", "/v1/api-keys/"+k.ID.String()+"/logs?limit=201", boot.APIKey, ""))

	got, err := admin.APIKeysGet(ctx, api.APIKeysGetParams{ID: k.ID})
	require.NoError(t, err)
	require.True(t, got.LastUsedAt.Set && !got.LastUsedAt.Null)
	require.Equal(t, "127.0.0.1", got.LastRequestIP.Value)

	// Summary over the last 24 hours (the admin key's own calls count too).
	require.NoError(t, env.Usage.Flush(ctx))
	sum, err := admin.APIKeysUsageSummary(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, sum.ActiveKeys)
	require.GreaterOrEqual(t, sum.Requests24h, int64(5))
	require.GreaterOrEqual(t, sum.Errors24h, int64(1))
	require.True(t, sum.LastCallAt.Set && !sum.LastCallAt.Null)

	// One key's analytics: minute buckets, empty ones included, and the per-endpoint breakdown.
	from := time.Now().Add(-10 * time.Minute)
	an, err := admin.APIKeysAnalytics(ctx, api.APIKeysAnalyticsParams{ID: k.ID.String(), From: api.NewOptDateTime(from),
		Interval: api.NewOptAPIKeysAnalyticsInterval(api.APIKeysAnalyticsIntervalMinute)})
	require.NoError(t, err)
	require.Equal(t, k.ID, an.APIKeyID)
	require.Equal(t, int64(5), an.Total)
	require.Equal(t, int64(1), an.Errors)
	require.GreaterOrEqual(t, len(an.Buckets), 10)
	var total, clientErrors int64
	for _, b := range an.Buckets {
		total += b.Total
		clientErrors += b.ClientErrors
		require.Equal(t, b.Total, b.Success+b.ClientErrors+b.ServerErrors)
	}
	require.Equal(t, int64(5), total)
	require.Equal(t, int64(1), clientErrors)
	require.Len(t, an.Endpoints, 2)
	require.Equal(t, api.APIKeyEndpointStat{Endpoint: "/api-keys/{id}", Method: "GET", Count: 4, ErrorCount: 1, AvgLatencyMs: an.Endpoints[0].AvgLatencyMs}, an.Endpoints[0])

	// The organization-wide forms: `all` and /usage/analytics agree and carry the all-zero id.
	// Timestamps travel with second precision: end the range safely after the requests.
	to := time.Now().Add(time.Minute)
	all, err := admin.APIKeysAnalytics(ctx, api.APIKeysAnalyticsParams{ID: "all", From: api.NewOptDateTime(from), To: api.NewOptDateTime(to)})
	require.NoError(t, err)
	require.Equal(t, uuid.Nil, all.APIKeyID)
	require.Equal(t, api.APIKeyAnalyticsIntervalHour, all.Interval)
	org, err := admin.APIKeysUsageAnalytics(ctx, api.APIKeysUsageAnalyticsParams{From: api.NewOptDateTime(from), To: api.NewOptDateTime(to)})
	require.NoError(t, err)
	require.Equal(t, all.Total, org.Total)
	require.Greater(t, org.Total, an.Total)

	_, err = admin.APIKeysAnalytics(ctx, api.APIKeysAnalyticsParams{ID: "nope"})
	requireAPIError(t, err, 400, "invalid_id")
	_, err = admin.APIKeysAnalytics(ctx, api.APIKeysAnalyticsParams{ID: uuid.NewString()})
	requireAPIError(t, err, 404, "not_found")
	_, err = admin.APIKeysUsageAnalytics(ctx, api.APIKeysUsageAnalyticsParams{From: api.NewOptDateTime(time.Now().Add(-30 * 24 * time.Hour)),
		Interval: api.NewOptAPIKeysUsageAnalyticsInterval(api.APIKeysUsageAnalyticsIntervalMinute)})
	requireAPIError(t, err, 400, "invalid_range")
	_, err = admin.APIKeysUsageAnalytics(ctx, api.APIKeysUsageAnalyticsParams{From: api.NewOptDateTime(time.Now().Add(time.Hour))})
	requireAPIError(t, err, 400, "invalid_range")
	require.Equal(t, 400, orgRawStatus(t, env, "GET", "/v1/api-keys/usage/analytics?interval=week", boot.APIKey, ""))

	// Usage of another organization is invisible.
	other := env.Client(t, env.Bootstrap(t, "globex").APIKey)
	_, err = other.APIKeysListLogs(ctx, api.APIKeysListLogsParams{ID: k.ID})
	requireAPIError(t, err, 404, "not_found")
	var rows int
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, boot.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM api_key_usage_logs`).Scan(&rows)
	}))
	require.Positive(t, rows)
}

package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// TestOAuthApplications covers dashboard apps: secrets shown once, allowed webhook domains, the webhook secret
// and its rotation, a confidential client's flow with HTTP Basic, scopes narrowed after approval, and deletion
// revoking grants in other organizations.
func TestOAuthApplications(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	devPair := env.SignUp(t, "dev@oauth.example")
	devOrg := homeOrganization(t, env, devPair)
	dev := env.Client(t, devPair.AccessToken)

	create := func(req api.OAuthApplicationCreate) (*api.OAuthApplicationWithSecrets, *api.ErrorStatusCode) {
		t.Helper()
		app, err := dev.OAuthApplicationsCreate(ctx, &req, api.OAuthApplicationsCreateParams{})
		var se *api.ErrorStatusCode
		if errors.As(err, &se) {
			return nil, se
		}
		require.NoError(t, err)
		return app, nil
	}
	valid := func() api.OAuthApplicationCreate {
		return api.OAuthApplicationCreate{Name: "Partner CRM", RedirectUris: []string{oauthRedirect, "https://crm.partner.io/oauth/callback"},
			Scopes:      []api.OAuthScope{"read_contacts", "send_campaigns", "read_audit_logs"},
			Description: api.NewOptString("Syncs contacts."), Logo: api.NewOptString("https://crm.partner.io/logo.png"),
			Website: api.NewOptString("https://crm.partner.io"), AllowedWebhookDomains: []string{".partner.io", "hooks.example.com"},
			WebhookURL: api.NewOptString("https://eu.hooks.partner.io/outflow")}
	}

	// Allowed webhook domains: a leading dot allows the apex and subdomains, a bare entry that host only, an
	// empty list no webhook_url at all; redirect URIs must be https or loopback.
	for name, tc := range map[string]struct {
		edit func(*api.OAuthApplicationCreate)
		code string
	}{
		"host outside the domains":  {func(r *api.OAuthApplicationCreate) { r.WebhookURL = api.NewOptString("https://partner.evil.io/x") }, "invalid_webhook_url"},
		"subdomain of a bare entry": {func(r *api.OAuthApplicationCreate) { r.WebhookURL = api.NewOptString("https://a.hooks.example.com/x") }, "invalid_webhook_url"},
		"no domains":                {func(r *api.OAuthApplicationCreate) { r.AllowedWebhookDomains = nil }, "invalid_webhook_url"},
		"http webhook":              {func(r *api.OAuthApplicationCreate) { r.WebhookURL = api.NewOptString("http://eu.hooks.partner.io/x") }, "invalid_webhook_url"},
		"wildcard domain":           {func(r *api.OAuthApplicationCreate) { r.AllowedWebhookDomains = []string{"*.partner.io"} }, "invalid_webhook_domain"},
		"http redirect":             {func(r *api.OAuthApplicationCreate) { r.RedirectUris = []string{"http://crm.partner.io/cb"} }, "invalid_redirect_uri"},
		"private-use redirect":      {func(r *api.OAuthApplicationCreate) { r.RedirectUris = []string{"io.partner.crm:/cb"} }, "invalid_redirect_uri"},
	} {
		req := valid()
		tc.edit(&req)
		_, se := create(req)
		require.NotNil(t, se, name)
		require.Equal(t, http.StatusBadRequest, se.StatusCode, name)
		require.Equal(t, tc.code, se.Response.Code, name)
	}
	for _, hook := range []string{"https://partner.io/x", "https://hooks.example.com/x", ""} {
		req := valid()
		req.WebhookURL = api.NewOptString(hook)
		_, se := create(req)
		require.Nil(t, se, hook)
	}

	app, se := create(valid())
	require.Nil(t, se)
	require.Equal(t, api.OAuthClientTypeConfidential, app.ClientType)
	require.True(t, strings.HasPrefix(app.ClientSecret.Value, "ofcs_"))
	require.True(t, strings.HasPrefix(app.WebhookSecret, "whsec_"))
	require.Equal(t, devOrg, app.OrganizationID)
	require.Equal(t, []string{".partner.io", "hooks.example.com"}, app.AllowedWebhookDomains)

	got, err := dev.OAuthApplicationsGet(ctx, api.OAuthApplicationsGetParams{ID: app.ID})
	require.NoError(t, err)
	require.Equal(t, app.ClientID, got.ClientID)
	list, err := dev.OAuthApplicationsList(ctx, api.OAuthApplicationsListParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.True(t, list.Pagination.HasMore)
	require.Equal(t, app.ID, list.Data[0].ID, "newest first")

	// The webhook secret stays readable; rotation replaces it.
	ws, err := dev.OAuthApplicationsGetWebhookSecret(ctx, api.OAuthApplicationsGetWebhookSecretParams{ID: app.ID})
	require.NoError(t, err)
	require.Equal(t, app.WebhookSecret, ws.WebhookSecret)
	rotated, err := dev.OAuthApplicationsRotateWebhookSecret(ctx, api.OAuthApplicationsRotateWebhookSecretParams{ID: app.ID})
	require.NoError(t, err)
	require.NotEqual(t, app.WebhookSecret, rotated.WebhookSecret)
	require.True(t, strings.HasPrefix(rotated.WebhookSecret, "whsec_"))
	ws, err = dev.OAuthApplicationsGetWebhookSecret(ctx, api.OAuthApplicationsGetWebhookSecretParams{ID: app.ID})
	require.NoError(t, err)
	require.Equal(t, rotated.WebhookSecret, ws.WebhookSecret)

	// The update check runs on the resulting values of both fields.
	_, err = dev.OAuthApplicationsUpdate(ctx, &api.OAuthApplicationUpdate{AllowedWebhookDomains: []string{"hooks.example.com"}}, api.OAuthApplicationsUpdateParams{ID: app.ID})
	require.ErrorAs(t, err, &se)
	require.Equal(t, "invalid_webhook_url", se.Response.Code)

	// Another organization authorizes the app; a confidential client authenticates with HTTP Basic, and a
	// dashboard app may hold send_campaigns.
	userPair := env.SignUp(t, "user@oauth.example")
	userOrg := homeOrganization(t, env, userPair)
	conf := oauthConfig(env, app.ClientID, app.ClientSecret.Value, "read_audit_logs", "send_campaigns")
	browser := newOAuthBrowser(t, env, "user@oauth.example")
	page := browser.consent(t, conf.AuthCodeURL("state-app"))
	require.Contains(t, page, "Syncs contacts.")
	require.Contains(t, page, `href="https://crm.partner.io/logo.png"`)
	require.NotContains(t, page, "<img", "the page loads nothing from elsewhere")
	require.NotContains(t, page, "registered itself")
	back := browser.decide(t, page, userOrg, "approve")
	tok, err := conf.Exchange(oauthContext(env), back.Query().Get("code"))
	require.NoError(t, err)
	require.Equal(t, "send_campaigns read_audit_logs", tok.Extra("scope"))
	wrong := oauthConfig(env, app.ClientID, "ofcs_wrong", "read_audit_logs")
	_, err = wrong.TokenSource(oauthContext(env), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_client")
	// Authenticating the client twice (HTTP Basic and client_secret in the body) is refused.
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_secret": {app.ClientSecret.Value}}
	req, err := http.NewRequest(http.MethodPost, env.Server.URL+"/v1/oauth/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(app.ClientID, app.ClientSecret.Value)
	resp, err := env.Server.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Approving again replaces the grant: the earlier tokens stop working.
	back = browser.decide(t, browser.consent(t, conf.AuthCodeURL("state-again")), userOrg, "approve")
	first := tok
	tok, err = conf.Exchange(oauthContext(env), back.Query().Get("code"))
	require.NoError(t, err)
	requireUnauthorized(t, env, first.AccessToken)
	_, err = conf.TokenSource(oauthContext(env), &oauth2.Token{RefreshToken: first.RefreshToken}).Token()
	requireOAuthError(t, err, "invalid_grant")

	// Narrowing the app's scopes narrows the grant at once.
	caller := env.Client(t, tok.AccessToken)
	_, err = caller.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	_, err = dev.OAuthApplicationsUpdate(ctx, &api.OAuthApplicationUpdate{Scopes: []api.OAuthScope{"read_contacts"}}, api.OAuthApplicationsUpdateParams{ID: app.ID})
	require.NoError(t, err)
	_, err = caller.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusForbidden, se.StatusCode)

	// Another organization cannot see the app; deleting it revokes the grant in the user's organization.
	_, err = env.Client(t, userPair.AccessToken).OAuthApplicationsGet(ctx, api.OAuthApplicationsGetParams{ID: app.ID})
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.StatusCode)
	require.NoError(t, dev.OAuthApplicationsDelete(ctx, api.OAuthApplicationsDeleteParams{ID: app.ID}))
	requireUnauthorized(t, env, tok.AccessToken)
	_, err = dev.OAuthApplicationsGet(ctx, api.OAuthApplicationsGetParams{ID: app.ID})
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.StatusCode)

	// API keys are refused on the session-only management operations, and need API_KEYS for the secret.
	key := scopedKey(t, env, devOrg, auth.ReadContacts)
	_, err = env.Client(t, key).OAuthApplicationsList(ctx, api.OAuthApplicationsListParams{})
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusForbidden, se.StatusCode)

	require.Equal(t, []string{"oauth_application.created", "oauth_application.created", "oauth_application.created",
		"oauth_application.created", "oauth_application.webhook_secret_rotated", "oauth_application.updated", "oauth_application.deleted"},
		oauthAuditActions(t, env, devOrg))
	require.Equal(t, []string{"oauth_grant.created", "oauth_grant.created"}, oauthAuditActions(t, env, userOrg))
}

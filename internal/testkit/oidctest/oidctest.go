// Package oidctest runs an OpenID Connect provider in process for tests: real RSA signing keys, a discovery
// document, a JWKS, and authorization and token endpoints implementing the code flow with PKCE (S256),
// client authentication and single-use codes. Code under test verifies real signatures against keys it
// fetched over HTTP, exactly as it does with Google or Apple, instead of a mocked verifier.
//
// The authorization endpoint stands in for the provider's login page: it signs in the person set with SignInAs
// (or answers the refusal set with Refuse) and sends the browser back at once, as a redirect or, for
// response_mode=form_post, as the auto-submitting form Apple uses.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/outflowhq/outflow/internal/platform/config"
)

// Options shape the provider.
type Options struct {
	// ClientID and ClientSecret are the one client registered with the provider.
	ClientID     string
	ClientSecret string
	// AuthMethod is the one token endpoint authentication method the discovery document advertises and the
	// token endpoint accepts: "client_secret_basic" (default, Google-like) or "client_secret_post"
	// (Apple-like).
	AuthMethod string
	// AccessTTL is the lifetime of the access tokens issued (default an hour).
	AccessTTL time.Duration
	// OnAccessToken is called with every access token issued, by a code or a refresh, so a test can make its
	// mail servers accept exactly those tokens.
	OnAccessToken func(token string)
}

// User is the person the authorization endpoint signs in.
type User struct {
	Subject       string
	Email         string
	EmailVerified bool
	GivenName     string
	FamilyName    string
}

// Claims is an ID token payload; a map so tests can set any claim to any value, including wrong ones.
type Claims map[string]any

type grant struct {
	clientID, redirectURI, challenge, nonce string
	user                                    User
	used                                    bool
}

type signingKey struct {
	kid string
	key *rsa.PrivateKey
}

// Provider is a running in-process OpenID Connect provider.
type Provider struct {
	// Server serves the provider; Issuer is its URL and the "iss" of every token it signs.
	Server *httptest.Server
	Issuer string
	opts   Options

	// down makes every request's connection drop (GoDown).
	down atomic.Bool

	mu      sync.Mutex
	keys    []signingKey // keys[0] signs; every key is published
	user    User
	refusal string
	tamper  func(Claims)
	grants  map[string]*grant
	// refresh tokens issued, and whether each still works; refreshes counts the refresh_token grants honoured.
	refresh   map[string]bool
	refreshes int
}

// New starts a provider that stops when t ends.
func New(t testing.TB, o Options) *Provider {
	t.Helper()
	if o.AuthMethod == "" {
		o.AuthMethod = "client_secret_basic"
	}
	if o.AccessTTL == 0 {
		o.AccessTTL = time.Hour
	}
	p := &Provider{opts: o, grants: map[string]*grant{}, refresh: map[string]bool{},
		user: User{Subject: "subject-1", Email: "person@example.com", EmailVerified: true}}
	p.keys = []signingKey{newKey(t)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			// Unreachable: the connection drops without an answer.
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		mux.ServeHTTP(w, r)
	}))
	p.Issuer = p.Server.URL
	t.Cleanup(p.Server.Close)
	return p
}

func newKey(t testing.TB) signingKey {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return signingKey{kid: base64.RawURLEncoding.EncodeToString(b), key: key}
}

// GoDown makes the provider unreachable: every connection drops without an answer. Unlike closing Server,
// its port stays taken, so no other test's server can start on it and answer in its place.
func (p *Provider) GoDown() { p.down.Store(true) }

// ProviderConfig is the configuration that points a deployment at this provider.
func (p *Provider) ProviderConfig() config.ProviderConfig {
	return config.ProviderConfig{Name: "Test IdP", Issuer: p.Issuer, ClientID: p.opts.ClientID, ClientSecret: p.opts.ClientSecret}
}

// SignInAs sets the person the authorization endpoint signs in from now on.
func (p *Provider) SignInAs(u User) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.user, p.refusal = u, ""
}

// Refuse makes the authorization endpoint answer every request with the OAuth error code (access_denied,
// user_cancelled_authorize, ...) instead of signing anyone in.
func (p *Provider) Refuse(code string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refusal = code
}

// Tamper lets f change the claims of every ID token the token endpoint issues from now on, so a test can make
// the provider answer a wrong nonce, audience or expiry through the real browser flow.
func (p *Provider) Tamper(f func(Claims)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = f
}

// RotateKey starts signing with a new key; the old one stays published.
func (p *Provider) RotateKey(t testing.TB) {
	t.Helper()
	k := newKey(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append([]signingKey{k}, p.keys...)
}

// ClaimsFor returns valid ID token claims for u: this issuer, this client, issued now, valid five minutes.
func (p *Provider) ClaimsFor(u User) Claims {
	now := time.Now()
	c := Claims{"iss": p.Issuer, "aud": p.opts.ClientID, "sub": u.Subject, "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix()}
	if u.Email != "" {
		c["email"] = u.Email
		c["email_verified"] = u.EmailVerified
	}
	if u.GivenName != "" {
		c["given_name"] = u.GivenName
	}
	if u.FamilyName != "" {
		c["family_name"] = u.FamilyName
	}
	return c
}

// Sign returns the claims as an RS256 ID token signed with the provider's current, published key.
func (p *Provider) Sign(t testing.TB, c Claims) string {
	t.Helper()
	p.mu.Lock()
	k := p.keys[0]
	p.mu.Unlock()
	return sign(t, k, c)
}

// SignUnpublished returns the claims signed with a fresh key the provider never published, under the kid of
// the published key: a forgery that must not verify.
func (p *Provider) SignUnpublished(t testing.TB, c Claims) string {
	t.Helper()
	forged := newKey(t)
	p.mu.Lock()
	forged.kid = p.keys[0].kid
	p.mu.Unlock()
	return sign(t, forged, c)
}

func sign(t testing.TB, k signingKey, c Claims) string {
	t.Helper()
	s, err := signClaims(k, c)
	if err != nil {
		t.Fatalf("oidctest: sign: %v", err)
	}
	return s
}

func signClaims(k signingKey, c Claims) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), k.kid))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Authorize plays the browser at the provider: it opens authURL (as returned by a begin call) and returns
// where the provider sends the browser back and with which parameters, from the redirect's query or, for
// response_mode=form_post, from the auto-submitting form. It fails t when the provider rejects the request.
func (p *Provider) Authorize(t testing.TB, authURL string) (redirectURI string, params url.Values) {
	t.Helper()
	client := *p.Server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(authURL)
	if err != nil {
		t.Fatalf("oidctest: authorize: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusFound:
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatalf("oidctest: authorize redirect: %v", err)
		}
		params = loc.Query()
		loc.RawQuery = ""
		return loc.String(), params
	case http.StatusOK:
		action := formAction.FindSubmatch(body)
		if action == nil {
			t.Fatalf("oidctest: authorize answered no form: %s", body)
		}
		params = url.Values{}
		for _, m := range formInput.FindAllSubmatch(body, -1) {
			params.Set(html.UnescapeString(string(m[1])), html.UnescapeString(string(m[2])))
		}
		return html.UnescapeString(string(action[1])), params
	}
	t.Fatalf("oidctest: authorize answered %d: %s", resp.StatusCode, body)
	return "", nil
}

var (
	formAction = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	formInput  = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
)

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.Issuer,
		"authorization_endpoint":                p.Issuer + "/authorize",
		"token_endpoint":                        p.Issuer + "/token",
		"jwks_uri":                              p.Issuer + "/jwks",
		"response_types_supported":              []string{"code"},
		"response_modes_supported":              []string{"query", "form_post"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "email", "profile", "name"},
		"token_endpoint_auth_methods_supported": []string{p.opts.AuthMethod},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := jose.JSONWebKeySet{}
	for _, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.key.PublicKey, KeyID: k.kid, Algorithm: string(jose.RS256), Use: "sig"})
	}
	writeJSON(w, http.StatusOK, set)
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirectURI := q.Get("redirect_uri")
	switch {
	case q.Get("client_id") != p.opts.ClientID:
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	case redirectURI == "" || q.Get("response_type") != "code":
		http.Error(w, "redirect_uri and response_type=code are required", http.StatusBadRequest)
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		http.Error(w, "PKCE with S256 is required", http.StatusBadRequest)
		return
	case q.Get("state") == "" || q.Get("nonce") == "":
		http.Error(w, "state and nonce are required", http.StatusBadRequest)
		return
	}
	answer := url.Values{"state": {q.Get("state")}}
	p.mu.Lock()
	if p.refusal != "" {
		answer.Set("error", p.refusal)
	} else {
		code := randomCode()
		p.grants[code] = &grant{clientID: p.opts.ClientID, redirectURI: redirectURI, challenge: q.Get("code_challenge"),
			nonce: q.Get("nonce"), user: p.user}
		answer.Set("code", code)
		if q.Get("response_mode") == "form_post" && (p.user.GivenName != "" || p.user.FamilyName != "") {
			// Apple sends the name only in the form, and only on the first consent.
			user, _ := json.Marshal(map[string]any{"email": p.user.Email,
				"name": map[string]string{"firstName": p.user.GivenName, "lastName": p.user.FamilyName}})
			answer.Set("user", string(user))
		}
	}
	p.mu.Unlock()
	if q.Get("response_mode") == "form_post" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><body onload="document.forms[0].submit()"><form method="post" action="%s">`, html.EscapeString(redirectURI))
		for k := range answer {
			fmt.Fprintf(w, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(answer.Get(k)))
		}
		fmt.Fprint(w, `</form></body></html>`)
		return
	}
	target, err := url.Parse(redirectURI)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	target.RawQuery = answer.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	if !p.clientAuthenticated(r) {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
	case "refresh_token":
		p.refreshGrant(w, r.PostForm.Get("refresh_token"))
		return
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	p.mu.Lock()
	g := p.grants[r.PostForm.Get("code")]
	valid := g != nil && !g.used && g.redirectURI == r.PostForm.Get("redirect_uri") &&
		challengeOf(r.PostForm.Get("code_verifier")) == g.challenge
	if g != nil {
		g.used = true
	}
	var claims Claims
	if valid {
		claims = p.ClaimsFor(g.user)
		claims["nonce"] = g.nonce
		if p.tamper != nil {
			p.tamper(claims)
		}
	}
	k := p.keys[0]
	p.mu.Unlock()
	if !valid {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	idToken, err := signClaims(k, claims)
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	refresh := randomCode()
	p.mu.Lock()
	p.refresh[refresh] = true
	p.mu.Unlock()
	access := p.issueAccess()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(p.opts.AccessTTL.Seconds()), "refresh_token": refresh, "id_token": idToken})
}

// refreshGrant answers a refresh_token grant: a new access token for a live refresh token, invalid_grant for
// an unknown or revoked one.
func (p *Provider) refreshGrant(w http.ResponseWriter, refresh string) {
	p.mu.Lock()
	live := p.refresh[refresh]
	if live {
		p.refreshes++
	}
	p.mu.Unlock()
	if !live {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": p.issueAccess(), "token_type": "Bearer",
		"expires_in": int(p.opts.AccessTTL.Seconds())})
}

func (p *Provider) issueAccess() string {
	access := randomCode()
	if p.opts.OnAccessToken != nil {
		p.opts.OnAccessToken(access)
	}
	return access
}

// RevokeGrants revokes every refresh token issued so far, as a person removing the app's access does.
func (p *Provider) RevokeGrants() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.refresh {
		p.refresh[k] = false
	}
}

// Refreshes counts the refresh_token grants the provider honoured.
func (p *Provider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

func (p *Provider) clientAuthenticated(r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	if p.opts.AuthMethod == "client_secret_post" {
		if basic {
			return false
		}
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		if !basic {
			return false
		}
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	return id == p.opts.ClientID && subtle.ConstantTimeCompare([]byte(secret), []byte(p.opts.ClientSecret)) == 1
}

func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func randomCode() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func tokenError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

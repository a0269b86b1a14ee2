package oidc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// RandomToken returns 32 random bytes, base64url-encoded: the shape of a state, nonce, PKCE verifier or
// browser binding.
func RandomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewPKCE returns a fresh PKCE verifier and its S256 challenge (RFC 7636): the verifier stays on the server,
// the challenge goes into the authorization request, so a code intercepted on its way back is useless.
func NewPKCE() (verifier, challenge string) {
	verifier = RandomToken()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// AuthRequest is one browser sign-in's authorization request.
type AuthRequest struct {
	// RedirectURI is where the provider returns the browser; the code exchange repeats it.
	RedirectURI string
	// State ties the provider's answer to this request; Nonce ties the ID token to it.
	State string
	Nonce string
	// CodeChallenge is the S256 PKCE challenge.
	CodeChallenge string
	// Scopes requested besides openid.
	Scopes []string
	// FormPost asks the provider to post its answer (response_mode=form_post), as Apple requires when the
	// name or email scope is requested.
	FormPost bool
}

// AuthCodeURL returns the provider URL the browser is sent to for the code flow with PKCE.
func (p *Provider) AuthCodeURL(ctx context.Context, r AuthRequest) (string, error) {
	m, err := p.Metadata(ctx)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(m.AuthorizationEndpoint)
	if err != nil {
		return "", fmt.Errorf("%w: authorization endpoint: %v", ErrUnavailable, err)
	}
	scopes := append([]string{"openid"}, r.Scopes...)
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", p.cfg.ClientID)
	q.Set("redirect_uri", r.RedirectURI)
	q.Set("scope", strings.Join(scopes, " "))
	q.Set("state", r.State)
	q.Set("nonce", r.Nonce)
	q.Set("code_challenge", r.CodeChallenge)
	q.Set("code_challenge_method", "S256")
	if r.FormPost {
		q.Set("response_mode", "form_post")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Redeem exchanges an authorization code at the provider's token endpoint (with the PKCE verifier and the
// redirect URI of the request) and verifies the ID token it answers, including the request's nonce.
func (p *Provider) Redeem(ctx context.Context, code, redirectURI, verifier, nonce string) (Identity, error) {
	if code == "" {
		return Identity{}, fmt.Errorf("%w: no authorization code", ErrRejected)
	}
	m, err := p.Metadata(ctx)
	if err != nil {
		return Identity{}, err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}, "client_id": {p.cfg.ClientID}}
	// client_secret_basic is the default when a provider lists no methods (OIDC Discovery 1.0, section 3);
	// providers that support only client_secret_post (Apple) get the secret in the form.
	basic := p.cfg.ClientSecret != "" && (len(m.TokenEndpointAuthMethods) == 0 ||
		slices.Contains(m.TokenEndpointAuthMethods, "client_secret_basic"))
	if p.cfg.ClientSecret != "" && !basic {
		form.Set("client_secret", p.cfg.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: token endpoint: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	var out struct {
		IDToken          string `json:"id_token"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	decodeErr := decodeBody(resp.Body, &out)
	switch {
	case resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnauthorized:
		// RFC 6749 section 5.2: invalid_grant (code used, expired, PKCE mismatch) and friends.
		return Identity{}, fmt.Errorf("%w: token endpoint refused the code (%d %s: %s)", ErrRejected,
			resp.StatusCode, out.Error, out.ErrorDescription)
	case resp.StatusCode != http.StatusOK || decodeErr != nil:
		return Identity{}, fmt.Errorf("%w: token endpoint answered %d (%v)", ErrUnavailable, resp.StatusCode, decodeErr)
	case out.IDToken == "":
		return Identity{}, fmt.Errorf("%w: token endpoint answered no id_token", ErrRejected)
	}
	return p.Verify(ctx, out.IDToken, nonce)
}

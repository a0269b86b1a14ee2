package handlers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/oauth"
)

// consentLimit bounds consent page requests per source address.
var consentLimit = auth.Limit{Max: 120, Window: time.Minute}

// consentSession is the person signed in on the consent page (nil when nobody is, or the sign-in expired).
func (h *OAuth) consentSession(ctx context.Context) (*auth.Principal, error) {
	token := rawFrom(ctx).session
	if token == "" {
		return nil, nil
	}
	p, err := h.authn.Authenticate(ctx, token)
	if err != nil {
		var e *apierror.Error
		if errors.As(err, &e) && e.Status < 500 {
			return nil, nil
		}
		return nil, err
	}
	if !p.IsSession() {
		return nil, nil
	}
	return p, nil
}

// authorizeValues collects an authorization request's parameters.
func authorizeValues(responseType, clientID, redirectURI string, scope, state, challenge, method api.OptString) url.Values {
	q := formOf(map[string]api.OptString{"scope": scope, "state": state, "code_challenge": challenge, "code_challenge_method": method})
	q.Set("response_type", responseType)
	q.Set("client_id", clientID)
	q.Set("redirect_uri", redirectURI)
	return q
}

// OAuthAuthorizeShowConsent validates the authorization request and shows the consent page, or sends the
// browser to sign in first, or back to the app with an error.
func (h *OAuth) OAuthAuthorizeShowConsent(ctx context.Context, params api.OAuthAuthorizeShowConsentParams) (api.OAuthAuthorizeShowConsentRes, error) {
	if err := h.limiter.Allow(ctx, "oauth_authorize:ip:"+reqctx.From(ctx).ClientIP, consentLimit); err != nil {
		return nil, err
	}
	a, err := h.provider.CheckAuthorize(ctx, authorizeValues(params.ResponseType, params.ClientID, params.RedirectURI,
		params.Scope, params.State, params.CodeChallenge, params.CodeChallengeMethod))
	var redirect *oauth.RedirectError
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeShowConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := h.consentSession(ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		next := consentPath + "?" + a.Params.Encode()
		return &api.OAuthAuthorizeShowConsentFound{Location: signInPath + "?" + url.Values{"next": {next}}.Encode()}, nil
	}
	user, err := h.queries.UserGetByID(ctx, h.pool, p.UserID)
	if err != nil {
		return nil, err
	}
	orgs, err := h.provider.ApprovableOrganizations(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	page := oauth.ConsentPage{Request: a, Email: user.Email, Organizations: orgs, CSRF: h.provider.ConsentToken(p.CredentialID, a)}
	return &api.OAuthAuthorizeShowConsentOK{Data: bytes.NewReader(page.Render())}, nil
}

// OAuthAuthorizeSubmitConsent records the decision posted from the consent page and sends the browser back to
// the app: with a code on approval, with access_denied on denial.
func (h *OAuth) OAuthAuthorizeSubmitConsent(ctx context.Context, req *api.OAuthConsentDecision) (*api.OAuthAuthorizeSubmitConsentFound, error) {
	if err := h.limiter.Allow(ctx, "oauth_authorize:ip:"+reqctx.From(ctx).ClientIP, consentLimit); err != nil {
		return nil, err
	}
	method := api.OptString{}
	if m, ok := req.CodeChallengeMethod.Get(); ok {
		method = api.NewOptString(string(m))
	}
	a, err := h.provider.CheckAuthorize(ctx, authorizeValues(string(req.ResponseType), req.ClientID, req.RedirectURI,
		req.Scope, req.State, req.CodeChallenge, method))
	var redirect *oauth.RedirectError
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := h.consentSession(ctx)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, apierror.Unauthorized("sign_in_required", "Sign in on the consent page before deciding.")
	}
	if !h.provider.CheckConsentToken(p.CredentialID, a, req.CsrfToken) {
		return nil, apierror.Forbidden("invalid_csrf_token", "The consent form is stale or was not issued for this sign-in. Reload the page.")
	}
	if req.Decision == api.OAuthConsentDecisionDecisionDeny {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: h.provider.DenyLocation(a)}, nil
	}
	// The approving person is the audit log's actor.
	location, err := h.provider.Approve(auth.WithPrincipal(ctx, p), a, p.UserID, req.OrganizationID)
	if errors.As(err, &redirect) {
		return &api.OAuthAuthorizeSubmitConsentFound{Location: redirect.Location}, nil
	}
	if err != nil {
		return nil, err
	}
	if a.Client.WebhookUrl != "" && h.webhooks != nil {
		// The approval created the app's managed endpoint; its challenge goes out now that it has committed.
		// The grant stands either way: a challenge that cannot be scheduled is logged, and the endpoint waits
		// unverified for POST /webhooks/{id}/verify.
		if err := h.webhooks.ChallengeManaged(ctx, req.OrganizationID, a.Client.ID, a.Client.WebhookUrl); err != nil {
			apierror.Log(ctx, h.logger, apierror.Internal(err))
		}
	}
	return &api.OAuthAuthorizeSubmitConsentFound{Location: location}, nil
}

// signIn serves the consent flow's sign-in page: email and password, then the emailed code, then the TOTP code
// when 2FA is on (accounts.Flows, as the API's sign-in). The session it opens is kept in an HttpOnly cookie
// sent only to /oauth, and the browser goes back to the authorization request it came from.
func (h *OAuth) signIn(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		writePage(w, http.StatusOK, oauth.SignInPage{Step: "password", Next: safeNext(r.URL.Query().Get("next"))}.Render())
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		apierror.Write(w, r, h.logger, apierror.New(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; allowed: GET, POST."))
		return
	}
	if err := r.ParseForm(); err != nil {
		apierror.Write(w, r, h.logger, apierror.BadRequest("invalid_body", "The form could not be read."))
		return
	}
	f := r.PostForm
	page := oauth.SignInPage{Step: f.Get("step"), Next: safeNext(f.Get("next")), Email: f.Get("email"), Handle: f.Get("handle")}
	fail := func(err error) {
		e := apierror.From(err)
		apierror.Log(ctx, h.logger, e)
		page.Error = e.Message
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
		writePage(w, e.Status, page.Render())
	}
	var pair accounts.TokenPair
	switch page.Step {
	case "password":
		handle, err := h.flows.LoginStart(ctx, f.Get("email"), f.Get("password"), f.Get("captcha"))
		if err != nil {
			fail(err)
			return
		}
		page.Step, page.Handle = "code", handle
		writePage(w, http.StatusOK, page.Render())
		return
	case "code":
		res, err := h.flows.LoginConfirm(ctx, page.Handle, strings.TrimSpace(f.Get("code")))
		if err != nil {
			fail(err)
			return
		}
		if res.Tokens == nil {
			page.Step, page.Handle = "totp", res.PendingToken
			writePage(w, http.StatusOK, page.Render())
			return
		}
		pair = *res.Tokens
	case "totp":
		var err error
		if pair, err = h.twoFactor.VerifyLogin(ctx, page.Handle, strings.TrimSpace(f.Get("code"))); err != nil {
			fail(err)
			return
		}
	default:
		page.Step = "password"
		fail(apierror.BadRequest("invalid_step", "Start the sign-in again."))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: consentCookie, Value: pair.AccessToken, Path: "/oauth", Expires: pair.AccessExpiresAt,
		MaxAge: max(int(time.Until(pair.AccessExpiresAt).Seconds()), 1), HttpOnly: true, Secure: h.secureCookie,
		SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// safeNext keeps a post-sign-in destination only when it is this server's consent page: never another host.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path != consentPath || strings.HasPrefix(next, "//") {
		return consentPath
	}
	return u.RequestURI()
}

func writePage(w http.ResponseWriter, status int, page []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

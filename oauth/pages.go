package oauth

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"
)

// The consent flow's pages: plain server-rendered HTML, no script, no external stylesheet or font; html/template
// escapes every value. Nothing is loaded from elsewhere: an app's logo is linked, never fetched, so showing
// the page tells no third party who is consenting.

const pageLayout = `{{define "layout"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}} · Outflow</title>
<style>
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:30rem;margin:3rem auto;background:#fff;border:1px solid #dfe2e8;border-radius:10px;padding:2rem}
h1{font-size:1.3rem;margin:0 0 1rem}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=email],input[type=password],input[type=text],select{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #c4c9d4;border-radius:6px;font:inherit}
button{font:inherit;padding:.6rem 1.1rem;border-radius:6px;border:1px solid #2c5be0;background:#2c5be0;color:#fff;cursor:pointer;margin-top:1.2rem}
button.secondary{background:#fff;color:#1d2330;border-color:#c4c9d4}
.error{background:#fdecec;border:1px solid #f3b4b4;color:#8a1f1f;padding:.6rem .8rem;border-radius:6px}
.note{color:#5b6475;font-size:.9rem}
.app{display:flex;gap:1rem;align-items:center;margin-bottom:1rem}
.app .logo{font-size:.8rem}
ul.scopes{padding-left:1.2rem}
ul.scopes li{margin:.3rem 0}
code{font-size:.9rem}
</style>
</head>
<body><main>{{template "content" .}}</main></body>
</html>{{end}}`

const signInContent = `{{define "content"}}
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/oauth/sign-in">
<input type="hidden" name="next" value="{{.Next}}">
{{if eq .Step "password"}}
<input type="hidden" name="step" value="password">
<p class="note">Sign in to your Outflow account to continue to the authorization request.</p>
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="{{.Email}}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Continue</button>
{{else if eq .Step "code"}}
<input type="hidden" name="step" value="code">
<input type="hidden" name="handle" value="{{.Handle}}">
<p class="note">We emailed a 6-digit sign-in code to {{.Email}}. It expires in 10 minutes.</p>
<input type="hidden" name="email" value="{{.Email}}">
<label for="code">Sign-in code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required>
<button type="submit">Sign in</button>
{{else}}
<input type="hidden" name="step" value="totp">
<input type="hidden" name="handle" value="{{.Handle}}">
<p class="note">Two-factor authentication is on for this account.</p>
<label for="code">Authenticator code or recovery code</label>
<input id="code" name="code" type="text" autocomplete="one-time-code" required>
<button type="submit">Verify</button>
{{end}}
</form>
{{end}}`

const consentContent = `{{define "content"}}
<div class="app">
{{if .Logo}}<a class="logo" href="{{.Logo}}" rel="noopener noreferrer">logo</a>{{end}}
<div><h1>Authorize {{.AppName}}</h1>{{if .Website}}<a href="{{.Website}}" rel="noopener noreferrer">{{.Website}}</a>{{end}}</div>
</div>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .SelfRegistered}}<p class="note">This app registered itself; Outflow has not reviewed it. Only continue if you trust it.</p>{{end}}
<p>{{.AppName}} asks to act in the organization you choose, with these permissions:</p>
<ul class="scopes">{{range .Scopes}}<li><code>{{.Name}}</code>: {{.Description}}</li>{{end}}</ul>
<p class="note">Signed in as {{.Email}}. After approving you will be sent to <code>{{.RedirectHost}}</code>.</p>
{{if .Organizations}}
<form method="post" action="/oauth/authorize">
{{range .Params}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label for="organization_id">Organization</label>
<select id="organization_id" name="organization_id" required>
{{range .Organizations}}<option value="{{.ID}}">{{.Name}}</option>
{{end}}</select>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
{{else}}
<p class="error">You cannot authorize apps in any of your organizations: that needs permission to manage API keys.</p>
<form method="post" action="/oauth/authorize">
{{range .Params}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="organization_id" value="00000000-0000-0000-0000-000000000000">
<button type="submit" name="decision" value="deny" class="secondary">Go back to the app</button>
</form>
{{end}}
{{end}}`

var (
	signInTemplate  = template.Must(template.Must(template.New("signin").Parse(pageLayout)).Parse(signInContent))
	consentTemplate = template.Must(template.Must(template.New("consent").Parse(pageLayout)).Parse(consentContent))
)

// SignInPage is the consent flow's sign-in form: Step is "password", "code" (the emailed code) or "totp".
type SignInPage struct {
	Step   string
	Next   string
	Email  string
	Handle string
	Error  string
}

// Render writes the page.
func (p SignInPage) Render() []byte {
	title := "Sign in"
	if p.Step == "totp" {
		title = "Two-factor authentication"
	}
	return render(signInTemplate, struct {
		SignInPage
		Title string
	}{p, title})
}

// Param is one hidden field of the consent form.
type Param struct{ Name, Value string }

// ConsentPage is the consent form for one authorization request.
type ConsentPage struct {
	Request       *AuthorizeRequest
	Email         string
	Organizations []Organization
	CSRF          string
}

// Render writes the page.
func (p ConsentPage) Render() []byte {
	c := p.Request.Client
	data := struct {
		Title, AppName, Description, Logo, Website, Email, RedirectHost, CSRF string
		SelfRegistered                                                        bool
		Scopes                                                                []ScopeInfo
		Organizations                                                         []Organization
		Params                                                                []Param
	}{
		Title: "Authorize " + c.Name, AppName: c.Name, Description: c.Description, Email: p.Email,
		Logo: httpsOnly(c.Logo), Website: httpsOnly(c.Website), CSRF: p.CSRF, SelfRegistered: c.SelfRegistered(),
		Scopes: ScopeInfos(p.Request.Scopes), Organizations: p.Organizations,
		RedirectHost: redirectHost(p.Request.Params.Get("redirect_uri")),
	}
	for _, k := range AuthorizeParams {
		if v := p.Request.Params.Get(k); v != "" {
			data.Params = append(data.Params, Param{Name: k, Value: v})
		}
	}
	return render(consentTemplate, data)
}

// httpsOnly keeps an app-supplied link or image only when it is an https URL: nothing else is shown.
func httpsOnly(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// redirectHost names where approval sends the browser, as a person can check it.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}

func render(t *template.Template, data any) []byte {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		// The templates are fixed and their data typed: a failure is a programming error.
		panic("oauth: render page: " + err.Error())
	}
	return b.Bytes()
}

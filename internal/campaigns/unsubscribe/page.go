package unsubscribe

import (
	"bytes"
	"html/template"
)

// The unsubscribe link's pages: plain server-rendered HTML, no script, nothing loaded from elsewhere (the
// handlers send a Content-Security-Policy that allows only the inline style), every value escaped by
// html/template. The confirm form has no action, so it posts back to the URL the page was loaded from,
// whichever tracking host that was.

// PageSecurityPolicy is the Content-Security-Policy of the pages: nothing loaded, no script, never framed (a
// framed confirm button could be clickjacked), forms post only to the page's own origin.
const PageSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var pages = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>{{if .Done}}Unsubscribed{{else}}Unsubscribe{{end}}</title>
<style>
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:30rem;margin:3rem auto;background:#fff;border:1px solid #dfe2e8;border-radius:10px;padding:2rem}
h1{font-size:1.3rem;margin:0 0 1rem}
button{font:inherit;padding:.6rem 1.1rem;border-radius:6px;border:1px solid #2c5be0;background:#2c5be0;color:#fff;cursor:pointer;margin-top:1rem}
</style>
</head>
<body><main>
{{if .Done}}<h1>You are unsubscribed</h1>
<p><strong>{{.Email}}</strong> will get no more of these emails from {{.Sender}}.</p>
{{else}}<h1>Unsubscribe</h1>
<p>Stop emails from {{.Sender}} to <strong>{{.Email}}</strong>?</p>
<form method="post"><input type="hidden" name="confirm" value="yes"><button type="submit">Unsubscribe</button></form>
{{end}}</main></body>
</html>
`))

// ConfirmPage is the page the unsubscribe link opens: it names the address and asks to confirm with a button
// that posts back to the link.
func ConfirmPage(r Recipient) []byte { return render(r, false) }

// DonePage is the answer to the confirm form: the address is unsubscribed.
func DonePage(r Recipient) []byte { return render(r, true) }

func render(r Recipient, done bool) []byte {
	var b bytes.Buffer
	// The template and its data are fixed; executing it cannot fail.
	_ = pages.Execute(&b, struct {
		Recipient
		Done bool
	}{r, done})
	return b.Bytes()
}

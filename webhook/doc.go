// Package webhook signs Outflow's webhook deliveries and lets receivers verify them. It is part of the Go
// SDK: a receiver imports it to check the X-Service-Signature header of each delivery, and the server signs
// with the same code, so both sides agree on the scheme by construction.
//
// The scheme (part 1, "Webhook delivery"): the header is `t=<unix seconds>,v1=<hex>`, where the hex value is
// HMAC-SHA256, keyed with the endpoint's `whsec_` secret, over `<t>.<raw body>`. A receiver rejects a
// timestamp more than the tolerance (default five minutes, never zero) away from its clock, compares in
// constant time, ignores schemes other than v1, and always uses the raw, unparsed body.
package webhook

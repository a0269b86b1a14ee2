// Package mailbox holds what a sender mailbox needs beyond its rows: reaching its SMTP and IMAP servers safely
// (TLS or STARTTLS, plain only to a loopback host when the deployment allows it, every connection through
// package egress so tenants cannot reach the deployment's own network), classifying a failed login so the API
// can answer with a fix, sealing its credentials bound to the row, and the warmup ramp the scheduler follows.
package mailbox

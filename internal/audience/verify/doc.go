// Package verify is the built-in email verifier: it tells, for each contact address, whether mail to it can
// be delivered (valid), might bounce or hurt the sender (risky), will bounce (invalid) or could not be told
// (unknown), with a sub-status, a human-readable reason and a confidence from 0 to 100. Campaigns read the
// verdicts: they never send to invalid addresses and send to risky ones only when a campaign allows it.
//
// An address goes through these checks in order; the first that decides gives the verdict:
//
//	check                               verdict                 confidence
//	not one address (contacts syntax)   invalid / syntax        100
//	domain is a disposable service      invalid / disposable    95
//	domain publishes a null MX ("."),   invalid / no_mx         99 (null MX), 95
//	  or has neither MX nor A/AAAA
//	DNS did not answer                  unknown                 0
//	SMTP probe (when enabled):
//	  RCPT 550, 551, 553 (not 5.7.x)    invalid                 90
//	  RCPT 552                          risky / mailbox_full    70
//	  RCPT 4xx, other 5xx, 5.7.x        unknown                 20
//	  (policy), no connection
//	  accepted, and a made-up local     risky / catch_all       50 (is_catch_all)
//	    part is accepted too
//	  accepted, made-up one refused     valid                   95
//	  accepted, made-up one undecided   valid                   80
//	without the probe, domain takes     valid                   70
//	  mail
//	local part names a role (admin,     risky / role            70 without the probe, 90 when accepted
//	  info, sales, ...)
//
// A role address is still probed: a mailbox the server refuses is invalid, whatever its name; one it accepts
// is risky (role) rather than valid, and keeps is_catch_all when the domain accepts everything.
//
// Without the probe the verifier knows only that the domain takes mail, not that the mailbox exists: its
// valid is a "deliverable domain" verdict, hence the lower confidence (70). The probe is off by default
// because most hosting networks block outbound port 25, which would turn every verdict into unknown.
//
// The probe connects only to publicly routable addresses (ProbeOptions.AllowPrivate lifts that for test
// rigs): whoever owns a domain chooses its MX, and a tenant must not reach the deployment's own network
// through one.
//
// DNS goes through a Resolver: production uses net.Resolver, optionally pointed at one DNS server, and tests
// point the same resolver at an in-process DNS server. Addresses checked together in a Batch share one MX
// lookup and one SMTP connection per domain, and one catch-all test.
//
// RunWorker carries out a verification run (verification_runs and their verification_run_contacts) in
// batches, one transaction per batch with DNS and SMTP outside it, and never overwrites a verdict that was
// imported or came from an external provider. CheckWorker checks, the same way, contacts that have no verdict
// at all, outside any run: the campaign engine asks for them (Requests) before a lead's first send.
package verify

// Package classify understands a reply: it reads an inbound message and answers its intent (positive,
// negative, question, neutral, out_of_office, automated), how sure it is, the evidence that decided it (the
// header, phrase, keyword or rule), whether it asks to be unsubscribed, and, for an out-of-office reply, the
// date its sender says they are back.
//
// The package is pure: it reads no database and no clock (the caller passes now), so a verdict can be
// explained, reproduced and tested on a corpus. Classifier is the seam a deployment plugs another engine
// into; Rules is the default, deterministic engine ("rules/v1"). Its stages, first decisive one wins:
//
//  1. A delivery or complaint report (dsn.Report) is automated: never a reply, never out of office.
//  2. Auto-reply headers (RFC 3834 Auto-Submitted, X-Autoreply, X-Autorespond, Precedence, List-Id, a null
//     Return-Path and similar) decide before any text rule; the text then tells out-of-office from other
//     automated mail.
//  3. Without such headers, out-of-office and automated subjects and phrases.
//  4. A person's text, after quotes and signatures are cut: an unsubscribe request outranks every other
//     intent (out-of-office text included: a person may be away and still ask); then negative, positive and
//     question phrases by weighted score (a negation before a positive phrase in its clause turns it), else
//     neutral.
//
// Opt-out requests (optout.go) always win, and only requests count. A request is a whole message or a
// clause of opt-out words (STOP, UNSUBSCRIBE, remove me, Abmelden, désinscription, baja), an unsubscribe or
// erasure phrase (take me off your list, delete my data, löschen Sie meine Daten), a negated contact (a verb
// of contacting the person or a noun of mailings with a stop and a more word near it: I would appreciate it
// if you did not contact me again; bitte sehen Sie künftig von weiteren Zusendungen ab; ne me contactez
// plus), a short answer that is the word our quoted message invited for opting out (reply "no" and I'll stop
// writing), or, for a message without text, an opt-out subject. A phrase that only mentions opting out is no
// request and the reply's own intent stands: quoted, negated or hypothetical (don't stop sending these; I
// almost hit unsubscribe), naming a thing (the unsubscribe link looks broken), after reported speech, an
// instruction or a reader-addressed condition (your email says reply STOP; if you want to opt out), bounded
// in time or redirected (don't contact me until March; email my colleague instead). Our footer in the quote
// is never read as the person's words. A bare no that our message did not invite is a decline.
//
// Every verdict carries its evidence: a request names the phrase or rule (opt_out_word, opt_out_request,
// invited_opt_out) and the words; a verdict that is no request lists, last, the mentions it set aside
// (opt_out_mention, with why).
//
// The phrase lists ship as data (data/<lang>.json for English, German, French and Spanish, the opt-out
// rules' words in their optout_* lists); a campaign's reply_intent keywords extend them for its replies
// (evidence kind keyword).
package classify

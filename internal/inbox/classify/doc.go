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
//  4. A person's text, after quotes and signatures are cut: unsubscribe requests, then negative, positive and
//     question phrases by weighted score (a negation before a positive phrase turns it), else neutral.
//
// The phrase lists ship as data (data/<lang>.json for English, German, French and Spanish); a campaign's
// reply_intent keywords extend them for its replies (evidence kind keyword).
package classify

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
// Opt-out requests (optout.go, contact.go, removal.go, invited.go, aside.go) always win, and only requests
// count. A request is a whole message or a clause of opt-out words (STOP, UNSUBSCRIBE, remove me, Abmelden,
// désinscription, baja), an unsubscribe phrase (take me off your list, löschen Sie meine Daten), a negated
// contact (a verb of contacting the person, anyone at their company or their address, or a noun of
// mailings, with a stop and a more word near it, nouns of stopping and verbs that mean again included: I
// would appreciate it if you did not contact me again; bitte sehen Sie künftig von weiteren Zusendungen ab;
// ne me contactez plus; merci de ne plus me relancer; la cessation de tout envoi; don't email anyone here
// again; no escriban más a esta dirección), a removal (a verb or noun of removing whose object is the
// person, or the person's data, articles and quantifiers between not counted: remove me; que me eliminen;
// meine Austragung; erase any personal data you hold about me; l'effacement de l'ensemble des données me
// concernant; under GDPR, delete the data you hold; forgetting is removing: forget me, oubliez cette adresse,
// vergessen Sie meine Adresse; the person's team, colleagues, company, domain or this address: remove
// all of us and anyone else at our domain; and, when the reply says the addressee has left, them or their
// address: Tom left the company, please remove his address), the person's objection to the
// processing of their data or to mailings (GDPR Art. 21: I object to the processing of my data for
// marketing; je m'oppose au traitement de mes données; me opongo al tratamiento de mis datos), a short
// answer that is the word our quoted message invited for opting out (reply "no" and I'll stop writing;
// reply no and I'll close your file; répondez « non » et je ne vous relancerai pas; Kein Interesse? Antworten
// Sie einfach mit „Nein“; Pas intéressé ? Répondez simplement « non »), or, for a message
// without text, an opt-out subject. The person as an object may stand before its verb with negations and
// particles between (mich nicht weiter anzuschreiben; me vuelvan a escribir); an elided article or pronoun
// is a word of its own (l'effacement is l' and effacement); a German verb split by its particle is read whole
// (hören Sie endlich auf, mich anzuschreiben; tragen Sie mich bitte aus); the informal address is read as the
// formal one (schreibt mir nicht mehr; ne m'écris plus; no me escribáis más, borrad mi dirección).
//
// A phrase that only mentions opting out is no request and the reply's own intent stands: quoted, negated
// before or after (don't stop sending these; n'arrêtez pas de m'envoyer; no dejen de mandarme; I almost
// hit unsubscribe; not that I want to unsubscribe; löschen Sie meine Daten nicht), in a question on a
// condition of the person's or an impersonal subject's (if we sign up, can we unsubscribe later?; if one
// tries it, can one opt out?) unless the person is the object (if you can, could you remove me?), naming a
// thing (the unsubscribe link looks broken), after reported speech, an instruction or a reader-addressed
// condition (your email says reply STOP; if you want to opt out), told as a story of the past that the
// reply then turns from (I hit unsubscribe on your newsletter back in the spring, but this one is relevant)
// unless mail goes on or it did not take (but you still write), as an opt-out meant and turned from (I almost
// unsubscribed; ich wollte mich eigentlich schon abmelden, aber dann …; j'ai failli me désinscrire; iba a
// darme de baja, pero luego …), or as the person's habit (I usually
// unsubscribe from these; suelo darme de baja), no need to opt out (no hace falta que me dé de baja; es ist
// nicht nötig, mich auszutragen), stopping one thing sent while asking for
// another (stop sending me PDFs, just send me a calendar link), bounded in time or redirected (don't contact
// me until March; email my colleague instead), a removal the person does themselves (can we delete our
// data?), an objection someone else makes or the reply asks about (my CFO will object to the marketing
// budget; how do we handle the right to object?). Our
// footer in the quote is never read as the person's words: the quote starts at the attribution line or header
// block of the major clients in the four languages (On … wrote:, Am … schrieb …:, Le … a écrit :, El …
// escribió:, From/Von/De: blocks, Original Message lines), and a reply written below the quote is read from
// below it. A bare no that our message did not invite is a decline; a decline phrase after reported speech or
// a condition (your email says to reply STOP if it's not the right time) is set aside.
//
// Every verdict carries its evidence: a request names the phrase or rule (opt_out_word, opt_out_request,
// erasure_request, objection_request, invited_opt_out) and the words; a verdict that is no request lists, last, the mentions it
// set aside (opt_out_mention, with why) and the declines it set aside (reported_decline).
//
// The phrase lists ship as data (data/<lang>.json for English, German, French and Spanish, the opt-out
// rules' words in their optout_* lists); a campaign's reply_intent keywords extend them for its replies
// (evidence kind keyword).
package classify

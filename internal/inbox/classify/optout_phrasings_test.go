package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// requireMention asserts no request, the reply's own intent, and a mention set aside for why.
func requireMention(t *testing.T, text string, want classify.Intent, why string) {
	t.Helper()
	v := requireNoRequest(t, reply(text), want)
	found := false
	for _, e := range v.Evidence {
		found = found || e.Name == "opt_out_mention" && len(e.Value) > len(why) && e.Value[:len(why)] == why
	}
	require.True(t, found, "%q: no %s mention in the evidence: %v", text, why, v.Evidence)
}

// TestAnOptOutTheReplyTellsOfInThePastIsNoRequestUnlessMailGoesOn: an opt-out told as a story of the past (a
// past-time word, then a contrast that turns to the message at hand) is no request, in each language; said
// with mail that goes on or an opt-out that did not take, it is a complaint and a request.
func TestAnOptOutTheReplyTellsOfInThePastIsNoRequestUnlessMailGoesOn(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"I clicked unsubscribe on your blog digest years ago, but this pilot is a different story. Free on Tuesday at 3pm?": classify.Positive,
		"I hit unsubscribe on your webinar invites a while back. But this is relevant: what does it cost?":                  classify.Question,
		"Ich habe vor Monaten auf Abmelden geklickt, aber das hier ist wirklich interessant.":                               classify.Positive,
		"J'ai demandé à me désinscrire de votre lettre l'an dernier, mais cette offre m'intéresse.":                         classify.Positive,
		"Le di a darme de baja hace meses, pero esta propuesta sí me interesa.":                                             classify.Positive,
	} {
		requireMention(t, text, want, "narrated")
	}
	for _, text := range []string{
		"I clicked unsubscribe last week but I still get your emails.",
		"I hit unsubscribe a month ago, but it did not work.",
		"I clicked unsubscribe years ago. But here you are again!",
		"Ich habe vor Wochen auf Abmelden geklickt, aber Sie schreiben mir immer noch.",
		"Le di a darme de baja el mes pasado, pero siguen llegando correos.",
	} {
		requireRequest(t, reply(text))
	}
}

// TestANegationThatDisclaimsAWishCancelsTheOptOut: "not that I want to unsubscribe" and its German, French and
// Spanish forms disclaim the wish, so the opt-out words after them are a mention; a disclaimer in a clause
// of its own leaves a request after it one.
func TestANegationThatDisclaimsAWishCancelsTheOptOut(t *testing.T) {
	for _, text := range []string{
		"Your footer link is broken, not that I want to unsubscribe. Just a heads-up.",
		"Nicht, dass ich mich abmelden möchte, aber Ihr Link ist kaputt.",
		"Non pas que je veuille me désinscrire, mais le lien ne marche pas.",
		"No es que quiera darme de baja, pero el enlace no funciona.",
	} {
		requireMention(t, text, classify.Neutral, "")
	}
	requireRequest(t, reply("Not that it matters, but please unsubscribe me."))
}

// TestStoppingOneThingSentWhileAskingForAnotherIsNoRequest: asking to stop one thing that is no mailing (PDFs,
// brochures) and, in the same or the next sentence, to be sent something else wants mail, only other mail,
// in each language; without the other wish, or when the stop is of mail itself, it is a request.
func TestStoppingOneThingSentWhileAskingForAnotherIsNoRequest(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"Stop sending me brochures and send me a price list instead.":                               classify.Question,
		"Please stop sending me slide decks. Email me a short summary and a calendar link.":         classify.Positive,
		"Bitte schicken Sie mir keine Broschüren mehr. Schicken Sie mir lieber einen Kalenderlink.": classify.Positive,
		"Arrêtez de m'envoyer des catalogues, envoyez-moi plutôt une démo.":                         classify.Positive,
		"Dejen de mandarme folletos, mándenme mejor un enlace para agendar.":                        classify.Positive,
		"No me manden más catálogos; envíenme un enlace a su calendario y hablamos.":                classify.Positive,
	} {
		requireMention(t, text, want, "another thing wanted")
	}
	for _, text := range []string{
		"Please stop sending me brochures.",
		"Stop emailing me, call me instead.",
		"Stop sending me emails, send them to my colleague instead. Actually no, just stop.",
		"Dejen de mandarme correos, llámenme si quieren.",
	} {
		requireRequest(t, reply(text))
	}
}

// TestTheInformalAddressAsksToStopInEachLanguage: a request to stop or to remove in the informal address (du
// and ihr, tu, tú and vosotros, the plural Spain uses to address a company) is a request as the formal one
// is, typed with or without accents; an informal invitation to write is none.
func TestTheInformalAddressAsksToStopInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"Schreibt mir nicht mehr.",
		"Hört auf, mir Mails zu schicken.",
		"Hören Sie auf, mir E-Mails zu senden.",
		"Löscht meine Daten, sofort.",
		"Tragt mich aus eurem Verteiler aus.",
		"Ne m'écris plus.",
		"Arrête de m'envoyer des mails.",
		"Désinscris-moi de ta liste.",
		"No me escribáis más.",
		"no me mandeis mas correos",
		"Dejad de escribirme.",
		"Borrad mis datos.",
		"Quitadme de vuestra lista ya.",
		"Paren de escribirme, por favor.",
		"No me mandes más correos.",
	} {
		requireRequest(t, reply(text))
	}
	requireNoRequest(t, reply("No dudéis en escribirme más adelante."), classify.Neutral)
	requireNoRequest(t, reply("Schreib mir gerne nächste Woche nochmal."), classify.Positive)
}

// TestAVerbThatMeansAgainMakesAFooterInviteANo: a verb whose meaning holds "again" (relancer, nachfassen,
// insistir, like follow up) is a stop's more word, so our footer saying a no ends the follow-ups invites the
// no as an opt-out, however the word is quoted (« non » with narrow spaces, „Nein“, «no»), and asking not to
// be followed up is a request.
func TestAVerbThatMeansAgainMakesAFooterInviteANo(t *testing.T) {
	for text, footer := range map[string]string{
		"Non.": "Pas le bon moment\u202f? Répondez «\u202fnon\u202f» et je ne vous relancerai pas.",
		"Nein": "Kein Thema für Sie? Antworten Sie mit „Nein“, dann fasse ich nicht weiter nach.",
		"no":   "¿No le encaja? Responda «no» y no insistiré.",
		"No":   "Not for you? Reply no and I won't follow up.",
	} {
		v := requireRequest(t, reply(quoting(text, footer)))
		require.Equal(t, "invited_opt_out", v.Evidence[0].Name, "%q", footer)
	}
	requireRequest(t, reply("Merci de ne plus me relancer."))
	requireNoRequest(t, reply("Ne me relancez pas avant septembre, svp."), classify.Neutral)
}

// TestQuantifiersDoNotKeepAnErasureFromItsData: articles and quantifiers between a verb or noun of erasing and
// the person's data (all of the, l'ensemble des, la totalidad de los, sämtliche) and German's formal Sie do
// not count in its reach.
func TestQuantifiersDoNotKeepAnErasureFromItsData(t *testing.T) {
	for _, text := range []string{
		"Kindly erase each and every record of my personal data.",
		"Bitte löschen Sie sämtliche bei Ihnen gespeicherten Daten zu meiner Person.",
		"Je vous prie de procéder à l'effacement de l'intégralité des informations me concernant.",
		"Solicito la supresión de la totalidad de los datos que tengan sobre mí.",
	} {
		requireRule(t, text, "erasure_request")
	}
	requireNoRequest(t, reply("Can you remove the duplicate contact and update my address?"), classify.Question)
}

// TestAnObjectionToProcessingOrMailingsIsARequestInEachLanguage: the person's objection (GDPR Art. 21) to the
// processing of their data, to mailings or to being contacted is a request; someone else's objection, one
// asked about and one negated are none.
func TestAnObjectionToProcessingOrMailingsIsARequestInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"I object to the use of my contact details for sales outreach.",
		"We object to any further marketing emails.",
		"I exercise my right to object to direct marketing.",
		"Hiermit lege ich Widerspruch gegen die Nutzung meiner Daten für Werbung ein.",
		"Wir widersprechen jeglicher Werbung per E-Mail.",
		"Nous nous opposons à toute prospection commerciale.",
		"Conformément au RGPD, je m'oppose à l'utilisation de mes coordonnées.",
		"Me opongo al uso de mis datos con fines comerciales.",
		"Ejercemos nuestro derecho de oposición al tratamiento de nuestros datos.",
	} {
		requireRule(t, text, "objection_request")
	}
	requireNoRequest(t, reply("My CFO will object to the marketing budget, I'm afraid."), classify.Neutral)
	requireMention(t, "How do we handle the right to object to marketing emails in your tool?", classify.Question, "asked")
	requireMention(t, "Nous devons gérer l'opposition de nos clients à la prospection.", classify.Neutral, "reported")
	requireMention(t, "Je ne m'oppose pas au traitement de mes données, envoyez-moi une démo.", classify.Positive, "negated")
}

// TestAskingToContactNobodyAtTheCompanyOrThisAddressIsARequest: the person may ask that nobody at their
// company be contacted again (anyone here, our staff, niemanden, personne, a nadie), or that their address
// be written to no more, in each language; the person's own contacting of others is none.
func TestAskingToContactNobodyAtTheCompanyOrThisAddressIsARequest(t *testing.T) {
	for _, text := range []string{
		"Please don't email anyone here again.",
		"Kindly stop contacting our staff.",
		"Bitte kontaktieren Sie niemanden mehr aus unserem Haus.",
		"Merci de ne plus solliciter personne dans notre équipe.",
		"No contacten más a nadie de la empresa.",
		"Do not write to this inbox again.",
		"Bitte schreiben Sie diese Adresse nicht mehr an.",
		"N'écrivez plus à cette adresse, merci.",
		"No escriban más a esta dirección.",
	} {
		requireRule(t, text, "opt_out_request")
	}
	requireNoRequest(t, reply("We never contact anyone more than twice, so your cadence surprised me."), classify.Neutral)
	requireNoRequest(t, reply("Je ne connais personne ici qui soit intéressé."), classify.Positive)
}

// TestRemovingTheAddressOfSomeoneWhoLeftIsARequest: when the reply says the addressee has left, asking to
// remove them or their address is a request, in each language, for their mail reaches the person; without
// it, or for something else of theirs, it is none.
func TestRemovingTheAddressOfSomeoneWhoLeftIsARequest(t *testing.T) {
	for _, text := range []string{
		"Priya left the company last month. Please delete her email address from your system.",
		"Jonas no longer works here, please remove him from your mailing list.",
		"Herr Albers hat das Unternehmen verlassen, bitte löschen Sie seine Adresse.",
		"Mme Lefèvre a quitté l'entreprise, merci de supprimer ses coordonnées.",
		"El Sr. Vidal ya no trabaja aquí, por favor borren su dirección.",
		"La Sra. Gil ya no trabaja aquí, elimínenla de su lista.",
	} {
		requireRequest(t, reply(text))
	}
	requireNoRequest(t, reply("Please remove his address from the invoice and use mine."), classify.Neutral)
	requireNoRequest(t, reply("Tom has left. Please delete his old tickets and assign them to me."), classify.Neutral)
}

// TestANegatedVerbOfCeasingAsksMailToGoOn: a verb of ceasing with a negation before it (don't stop sending
// these; n'arrêtez pas de m'envoyer; no dejen de mandarme; nicht aufhören) asks mail to go on, in each
// language; the verb of ceasing alone, or a negation that is the stop itself (ne plus, no más), is a request.
func TestANegatedVerbOfCeasingAsksMailToGoOn(t *testing.T) {
	for _, text := range []string{
		"Don't stop sending me these, they're great.",
		"Bitte nicht aufhören, mir Ihre Mails zu schicken!",
		"N'arrêtez pas de m'envoyer vos analyses, elles sont précieuses.",
		"Ne cesse pas de m'écrire, j'adore tes mails.",
		"No dejen de mandarme sus novedades, son muy útiles.",
	} {
		requireMention(t, text, classify.Neutral, "negated")
	}
	for _, text := range []string{"Stop sending me these.", "Hören Sie auf, mir E-Mails zu senden.", "Arrêtez de m'envoyer des mails.",
		"Merci de ne plus me contacter.", "Dejen de escribirme.", "No más correos, por favor."} {
		requireRequest(t, reply(text))
	}
}

// TestAHabitOfOptingOutIsNoRequestUnlessMailGoesOn: the person telling what they usually do with such mail (a
// word of habit before the opt-out words in their clause, or opening their sentence) describes a habit and
// asks nothing, in each language; said with mail that goes on, or with the request after a contrast, it is a
// request.
func TestAHabitOfOptingOutIsNoRequestUnlessMailGoesOn(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"To be frank I normally unsubscribe from vendor mail on sight, but your note on rota swaps is spot on.": classify.Neutral,
		"We typically opt out of these newsletters. This one is different, though: how much is it?":             classify.Question,
		"Meistens melde ich mich von solchen Mails gleich ab, aber Ihr Thema ist gerade aktuell.":               classify.Neutral,
		"En général, je me désinscris de ces envois, mais celui-ci tombe à pic.":                                classify.Neutral,
		"Solemos darnos de baja de estas listas, pero esta propuesta nos encaja.":                               classify.Neutral,
	} {
		requireMention(t, text, want, "habitual")
	}
	for _, text := range []string{
		"I usually unsubscribe from these, and still they keep coming.",
		"I don't usually reply, but please unsubscribe me.",
		"Normalerweise antworte ich nicht, aber bitte tragen Sie mich aus.",
	} {
		requireRequest(t, reply(text))
	}
}

// TestNoNeedToOptOutIsNoRequestInEachLanguage: saying there is no need to unsubscribe the person negates the
// opt-out, whether the phrase of removing is one word or several (que me den de baja) and, in German, when the
// infinitive with zu stands in a clause of its own after the negated need; a refusal before a request in a
// clause of its own leaves the request one.
func TestNoNeedToOptOutIsNoRequestInEachLanguage(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"There is no need to unsubscribe me; I'm just busy until spring.":      classify.Neutral,
		"It's not necessary to remove me from the list, ask me again in June.": classify.Neutral,
		"Es ist nicht nötig, mich auszutragen, wir sprechen im Herbst.":        classify.Neutral,
		"Kein Grund, meine Adresse zu löschen, das Thema bleibt spannend.":     classify.Positive,
		"Inutile de me désabonner, recontactez-moi en mars.":                   classify.Neutral,
		"Nul besoin de me désinscrire, le sujet reste pertinent.":              classify.Neutral,
		"No es necesario que me borren de la lista, escríbanme en abril.":      classify.Neutral,
		"No hay necesidad de darme de baja, solo es mal momento.":              classify.Neutral,
	} {
		requireMention(t, text, want, "negated")
	}
	for _, text := range []string{"No need, just take me off your list.", "Kein Bedarf. Bitte austragen.",
		"Pas besoin, désinscrivez-moi.", "No hace falta, denme de baja."} {
		requireRequest(t, reply(text))
	}
}

// TestRemovingThePersonsTeamOrCompanyIsARequest: a removal whose object is the person's colleagues, team,
// company or domain is a request in each language, articles and quantifiers between the verb and its object
// not counted (remove both of us); the person removing their team themselves is none.
func TestRemovingThePersonsTeamOrCompanyIsARequest(t *testing.T) {
	for _, text := range []string{
		"Please remove both of us, and everyone else at our domain, from your list.",
		"Could you remove our entire team from your mailing list?",
		"Bitte entfernen Sie unsere Kollegen und mich aus Ihrem Verteiler.",
		"Merci de retirer tous mes collègues de vos fichiers.",
		"Por favor, eliminen a todo nuestro equipo de su base de datos.",
	} {
		requireRequest(t, reply(text))
	}
	requireMention(t, "We removed our whole team from the old rota app in March.", classify.Neutral, "the person's own")
}

// TestAGermanVerbSplitByItsParticleIsReadWhole: a German separable verb whose particle ends the clause (hört
// … auf, tragen … aus, melden … ab) plays the whole verb's roles, so an angry or polite request with words
// between is heard; a negation still cancels it, and verbs that are no opt-out words are left alone.
func TestAGermanVerbSplitByItsParticleIsReadWhole(t *testing.T) {
	for _, text := range []string{
		"Hört bitte endlich auf, mir Mails zu schicken!",
		"Hören Sie jetzt bitte auf, mich zu kontaktieren.",
		"Tragen Sie mich bitte sofort aus.",
		"Melden Sie uns bitte ab, danke.",
	} {
		requireRequest(t, reply(text))
	}
	requireMention(t, "Tragen Sie mich bitte nicht aus, das Thema passt.", classify.Neutral, "negated")
	requireNoRequest(t, reply("Wie sieht das preislich aus?"), classify.Question)
	requireNoRequest(t, reply("Das hört sich gut an, ich bin dabei."), classify.Positive)
}

// TestAWordOfAnotherLanguageThatOnlyMatchesWithoutItsAccentsIsNotRead: French intéressé folds to the German
// Interesse, so a German reply that only says someone will write if there is interest is not positive; the
// French word in a French reply still is.
func TestAWordOfAnotherLanguageThatOnlyMatchesWithoutItsAccentsIsNotRead(t *testing.T) {
	requireNoRequest(t, reply("Frau Keller meldet sich bei Ihnen, falls Interesse besteht."), classify.Neutral)
	requireNoRequest(t, reply("Je suis très intéressé, appelez-moi."), classify.Positive)
}

// TestADeclineForOtherPrioritiesIsNegativeInEachLanguage: no priority this year, or other priorities, is a
// decline in each language, a thanks before it notwithstanding.
func TestADeclineForOtherPrioritiesIsNegativeInEachLanguage(t *testing.T) {
	for _, text := range []string{"Thanks, but we have other priorities this quarter.",
		"Danke für den Hinweis, aber das hat bei uns gerade keine Priorität.",
		"Merci, mais nous avons d'autres priorités.", "Gracias, pero ahora tenemos otras prioridades."} {
		requireNoRequest(t, reply(text), classify.Negative)
	}
}

// TestAFooterAskingWhetherThePersonHasNoInterestInvitesANo: our footer that asks whether the person has no
// interest and then asks for a word (Not interested? Just reply NO; Kein Interesse? Antworten Sie einfach mit
// „Nein“; Pas intéressé ? Répondez simplement « non »; ¿No le interesa? Responda simplemente con «no») invites
// the no as an opt-out, whatever the quote marks, the word's case or a phone signature below it; a footer
// that asks about a date invites no opt-out.
func TestAFooterAskingWhetherThePersonHasNoInterestInvitesANo(t *testing.T) {
	for text, footer := range map[string]string{
		"NO.":                                "Not relevant right now? Just reply 'NO'.",
		"no\n\nSent from my iPhone":          "Not interested? Reply with \"no\" and that's that.",
		"nein\n\nVon meinem iPhone gesendet": "Keinerlei Interesse? Dann antworten Sie einfach mit \u201aNein\u2018.",
		"Non":                                "Vous n'êtes pas concerné\u00a0? Répondez simplement par «\u00a0non\u00a0».",
		"NO":                                 "¿No le interesa? Responda simplemente con \u201cNO\u201d.",
	} {
		v := requireRequest(t, reply(quoting(text, footer)))
		require.Equal(t, "invited_opt_out", v.Evidence[0].Name, "%q", footer)
	}
	requireNoRequest(t, reply(quoting("No", "Is Tuesday not good for you? Reply no and I'll suggest another time.")), classify.Negative)
}

// TestForgettingThePersonOrTheirAddressIsARequest: asking us to forget the person, their address or details,
// or this address (forget me; vergessen Sie meine Adresse; oubliez cette adresse; olviden mis datos) is an
// indirect request in each language; forgetting something else, or the person's own forgetting, is none.
func TestForgettingThePersonOrTheirAddressIsARequest(t *testing.T) {
	for _, text := range []string{
		"Please just forget this address.",
		"Vergessen Sie bitte meine Kontaktdaten und die meiner Kollegen.",
		"Oubliez mes coordonnées, merci.",
		"Olviden esta dirección, por favor.",
		"Olvídenme, gracias.",
	} {
		requireRequest(t, reply(text))
	}
	requireNoRequest(t, reply("Forget my previous email, Tuesday works after all."), classify.Positive)
	requireNoRequest(t, reply("I forgot to send you my details, here they are."), classify.Neutral)
	requireNoRequest(t, reply("J'ai oublié de vous envoyer mes coordonnées."), classify.Neutral)
	requireNoRequest(t, reply("Ich hatte vergessen, Ihnen meine Daten zu schicken."), classify.Neutral)
}

// TestAnOptOutThePersonMeantAndTurnedFromIsNoRequest: an opt-out the person almost made or meant to make and
// then turned from (I almost unsubscribed; I was going to unsubscribe, but then …; ich wollte mich eigentlich
// abmelden, aber …; j'ai failli me désinscrire; je comptais me désinscrire, mais …; casi me doy de baja; iba a
// darme de baja, pero …) is a mention, and the reply's own intent stands; said with an opt-out that did not
// take, it is a request.
func TestAnOptOutThePersonMeantAndTurnedFromIsNoRequest(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"I almost unsubscribed, but then I read the case study. Does it work with Xero?":               classify.Question,
		"I was about to unsubscribe, but this one is actually relevant. What does it cost?":            classify.Question,
		"Beinahe hätte ich mich abgemeldet, aber dann kam Ihre Mail zur Lagerplanung. Was kostet das?": classify.Question,
		"Eigentlich wollte ich mich schon austragen, aber das Thema passt gerade. Was kostet das?":     classify.Question,
		"J'ai failli me désinscrire, mais finalement, quel est le prix ?":                              classify.Question,
		"Je comptais me désinscrire, mais votre étude de cas m'intéresse.":                             classify.Positive,
		"Casi me doy de baja, pero ¿cuánto cuesta?":                                                    classify.Question,
		"Quería darme de baja, pero luego vi su caso de éxito. ¿Cuánto cuesta?":                        classify.Question,
	} {
		requireNoRequest(t, reply(text), want)
	}
	for _, text := range []string{
		"I wanted to unsubscribe, but the link is broken.",
		"Ich wollte mich abmelden, aber es funktioniert nicht.",
		"Je voulais me désinscrire, mais je reçois toujours vos mails.",
		"Quería darme de baja, pero siguen llegando correos.",
	} {
		requireRequest(t, reply(text))
	}
}

// TestAFrozenBudgetIsADeclineInEachLanguage: a frozen budget is a decline in each language, a thanks before
// it notwithstanding.
func TestAFrozenBudgetIsADeclineInEachLanguage(t *testing.T) {
	for _, text := range []string{"Thanks, but our budget is frozen until next year.",
		"Danke, aber unser IT-Budget ist bis Ende 2027 eingefroren.",
		"Merci, mais notre budget formation est gelé jusqu'à l'an prochain.",
		"Gracias, pero nuestro presupuesto está congelado hasta 2027."} {
		requireNoRequest(t, reply(text), classify.Negative)
	}
}

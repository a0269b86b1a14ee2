package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// requireRule asserts a request decided by the named rule.
func requireRule(t *testing.T, text, rule string) {
	t.Helper()
	v := requireRequest(t, reply(text))
	require.Equal(t, rule, v.Evidence[0].Name, "%q: %v", text, v.Evidence)
}

// TestErasureRequestsNameTheDataAndItsOwnerInEachLanguage: a verb or noun of erasing with data that is the
// person's (an owner before it, a phrase naming the person after it, or a data-protection law in the
// sentence) is a request, whatever words stand between; the evidence quotes the verb, the data and the owner.
func TestErasureRequestsNameTheDataAndItsOwnerInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"Please delete all personal data you hold about me.",
		"Under GDPR, please erase the data you have on file.",
		"I request the deletion of my personal information from your systems.",
		"Kindly wipe my contact details from your CRM.",
		"Delete everything you have on me.",
		"Bitte löschen Sie alle Daten, die Sie über mich gespeichert haben.",
		"Ich verlange die Löschung meiner personenbezogenen Daten nach Art. 17 DSGVO.",
		"Je vous demande la suppression de toutes les données me concernant.",
		"Merci de procéder à l'effacement de mes coordonnées.",
		"Solicito la eliminación de mis datos personales conforme al RGPD.",
		"Borren toda la información que tengan sobre mí.",
	} {
		v := requireRequest(t, reply(text))
		require.Contains(t, []string{"erasure_request", "unsubscribe"}, v.Evidence[0].Name, "%q: %v", text, v.Evidence)
	}
	requireRule(t, "Under Article 17, please erase any personal information you keep about me.", "erasure_request")
	v := requireRequest(t, reply("Please purge any records you keep about me."))
	require.Equal(t, classify.Evidence{Kind: "rule", Name: "erasure_request", Value: "purge any records you keep about me"}, v.Evidence[0])
}

// TestARemovalOfThePersonIsARequestWhereverTheirPronounStands: the person as the object of a verb of
// removing is a request: after it (remove me, retirez-moi), fused with it (elimínenme), before it as a
// clitic (que me eliminen, me retirer), and a possessive before a noun of removing (my removal, meine
// Austragung, ma désinscription, mi baja).
func TestARemovalOfThePersonIsARequestWhereverTheirPronounStands(t *testing.T) {
	for _, text := range []string{
		"Could you remove us from your records?",
		"Bitte entfernen Sie mich aus Ihrem System.",
		"Veuillez me retirer de vos fichiers.",
		"Je vous prie de bien vouloir nous supprimer de votre base.",
		"Les ruego que me quiten de su base de datos.",
		"Quiero que me eliminen de sus listas.",
		"Les pido que me den de baja.",
		"Bórrenme de sus contactos, por favor.",
		"Please confirm my removal from your list.",
		"Bitte bestätigen Sie meine Austragung.",
		"Merci de confirmer ma désinscription.",
		"Confirmen mi baja, por favor.",
	} {
		requireRequest(t, reply(text))
	}
	requireRule(t, "Les ruego que me quiten de su base de datos.", "opt_out_request")
}

// TestAPronounBeforeItsVerbIsItsObjectAcrossNegationsAndParticles: in German, French and Spanish the person
// stands before the verb of contacting, with negations, words of going on, courtesies and particles between
// (mich nicht weiter anzuschreiben; me vuelvan a escribir); a verb of ceasing in the clause before governs
// the next one (unterlassen Sie es, mich …).
func TestAPronounBeforeItsVerbIsItsObjectAcrossNegationsAndParticles(t *testing.T) {
	for _, text := range []string{
		"Ich bitte Sie, mich künftig nicht mehr anzuschreiben.",
		"Ich möchte Sie bitten, uns nicht weiter zu kontaktieren.",
		"Bitte unterlassen Sie es, mich weiter zu kontaktieren.",
		"Hören Sie auf, mich anzuschreiben.",
		"Por favor, que no me vuelvan a mandar correos.",
		"Les pido que no me sigan escribiendo más.",
		"Merci de ne plus jamais me relancer.",
	} {
		requireRequest(t, reply(text))
	}
	v := requireRequest(t, reply("Ich bitte darum, uns bitte nicht weiter anzuschreiben."))
	require.Equal(t, "uns bitte nicht weiter anzuschreiben", v.Evidence[0].Value)
}

// TestElidedWordsAreReadAsTwoWords: an elided article or pronoun (l', d', m', qu') is a word of its own, so
// the noun or verb after it is found (l'effacement, d'envoyer, m'écrire); English contractions stay whole.
func TestElidedWordsAreReadAsTwoWords(t *testing.T) {
	for _, text := range []string{
		"Je demande l'effacement de mes données.",
		"Merci d'arrêter de m'écrire.",
		"Je vous demande l’arrêt de vos envois.",
		"Je ne souhaite plus qu'on m'envoie de messages.",
	} {
		requireRequest(t, reply(text))
	}
	requireRule(t, "I'd appreciate it if you didn't email me again.", "opt_out_request")
	requireNoRequest(t, reply("Don't stop sending these, they're useful."), classify.Neutral)
}

// TestNounsOfStoppingAreRequestsWithAMailingInEachLanguage: a noun of stopping with a noun of mailings is a
// request (an end to these emails, Einstellung weiterer Zusendungen, l'arrêt de vos envois, la cessation de
// tout envoi, el cese de los envíos).
func TestNounsOfStoppingAreRequestsWithAMailingInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"Please put an end to these emails.",
		"Ich bitte um Einstellung weiterer Zusendungen.",
		"Je demande l'arrêt de vos envois.",
		"Merci de la cessation de toute prospection.",
		"Les pido el cese de los envíos.",
	} {
		requireRule(t, text, "opt_out_request")
	}
	requireNoRequest(t, reply("Je suis en arrêt maladie jusqu'au 20, recontactez-moi ensuite."), classify.Neutral)
}

// TestARemovalTheReplyOnlyTalksAboutIsNoRequest: a removal negated before or after it (don't delete my data;
// löschen Sie meine Daten nicht), done by the person themselves (can we delete our data), of data that is
// someone else's (los datos de nuestros clientes), after a causative (let me remove) or after reported speech
// is no request, and the mention is in the evidence where a rule set it aside.
func TestARemovalTheReplyOnlyTalksAboutIsNoRequest(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"Please don't delete my data, I might come back to this later.":                     classify.Neutral,
		"Bitte löschen Sie meine Daten nicht, ich melde mich im Mai.":                       classify.Neutral,
		"Bitte melden Sie mich nicht ab, ich bin nur gerade im Urlaub.":                     classify.Neutral,
		"Ne supprimez pas mes coordonnées, je reviendrai vers vous.":                        classify.Neutral,
		"No me eliminen de la lista, me interesa. ¿Hablamos el martes?":                     classify.Positive,
		"Can we delete our data ourselves if we cancel?":                                    classify.Question,
		"¿Pueden eliminar los datos de nuestros clientes automáticamente?":                  classify.Question,
		"Your footer says it removes me from every list, is that right?":                    classify.Question,
		"Let me remove a few blockers first, then we can talk.":                             classify.Neutral,
		"We removed the old telematics boxes last year, so the timing could be good later.": classify.Neutral,
		"Nous avons supprimé l'ancien outil l'an dernier.":                                  classify.Neutral,
		"How do you handle deletion of customer data under GDPR?":                           classify.Question,
	} {
		requireNoRequest(t, reply(text), want)
	}
	v := requireNoRequest(t, reply("Can we delete our data ourselves if we cancel?"), classify.Question)
	require.Equal(t, "opt_out_mention", v.Evidence[len(v.Evidence)-1].Name)
	require.Contains(t, v.Evidence[len(v.Evidence)-1].Value, "the person's own")
}

// TestDeclinesNamingACompetitorAContractOrTheirSizeAreNegativeInEachLanguage: a renewed contract, a competitor
// chosen, a company too small, a need solved in-house decline without an opt-out word.
func TestDeclinesNamingACompetitorAContractOrTheirSizeAreNegativeInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"We renewed our contract with Geotab in March.",
		"Honestly this would be overkill for a team our size.",
		"We went with someone else last quarter.",
		"Wir haben uns für einen anderen Anbieter entschieden.",
		"Wir sind vertraglich gebunden und haben das intern gelöst.",
		"Für uns lohnt sich das nicht, wir sind zu klein.",
		"Nous avons signé avec un concurrent le mois dernier.",
		"C'est surdimensionné pour une structure comme la nôtre.",
		"Acabamos de firmar con otro proveedor.",
		"Somos demasiado pequeños para algo así.",
		"No nos compensa, lo resolvemos internamente.",
	} {
		requireNoRequest(t, reply(text), classify.Negative)
	}
	requireNoRequest(t, reply("Je vais en parler en interne et je reviens vers vous."), classify.Neutral)
}

// TestADeclineInReportedSpeechOrAConditionIsSetAside: a decline phrase after our message's words, an
// instruction or a condition (your note says to reply no if it's not a fit) is no decline; the reply's own
// intent stands and the evidence names what was set aside. A decline after an apology stays one.
func TestADeclineInReportedSpeechOrAConditionIsSetAside(t *testing.T) {
	v := requireNoRequest(t, reply("Your note says to reply no if it's not a fit. It is a fit! Can we talk Tuesday?"), classify.Positive)
	require.Equal(t, "reported_decline", v.Evidence[len(v.Evidence)-1].Name)
	requireNoRequest(t, reply("Ihre Mail sagt, ich soll Nein antworten, wenn kein Interesse besteht. Doch, gerne! Dienstag?"), classify.Positive)
	requireNoRequest(t, reply("Vous dites de répondre non si ce n'est pas le moment : c'est le moment. Mardi 10h ?"), classify.Positive)
	requireNoRequest(t, reply("Sorry if this sounds blunt, but not interested."), classify.Negative)
	requireNoRequest(t, reply("Unless the price drops a lot, not interested."), classify.Negative)
}

// TestABreakUpLineInvitesANoAsAnOptOut: our quoted message saying it will close the file, leave the person
// alone or stop following up makes a bare no an opt-out, in each language; a yes it invited is none.
func TestABreakUpLineInvitesANoAsAnOptOut(t *testing.T) {
	for text, footer := range map[string]string{
		"No":   "Should I close your file? Reply no and I'll close your file.",
		"no":   "If this isn't a priority, just reply no and I'll leave you alone.",
		"Nein": "Kein Thema für Sie? Antworten Sie mit Nein, dann schließe ich Ihre Akte.",
		"non":  "Pas pour vous ? Répondez non et je clôture votre dossier.",
		"No.":  "¿No es para usted? Responda no y cierro su expediente.",
	} {
		v := requireRequest(t, reply(quoting(text, footer)))
		require.Equal(t, "invited_opt_out", v.Evidence[0].Name)
	}
	requireNoRequest(t, reply(quoting("Yes", "Reply yes to book a call or I'll close your file.")), classify.Positive)
}

// TestAQuestionOnAConditionOfThePersonsIsNoRequest: a question that opens with a condition on the person
// (if we sign up, can we unsubscribe later?) only asks about opting out, in each language; a condition that is
// a courtesy or a threat (if possible, …; if I have to ask again …) leaves a request one.
func TestAQuestionOnAConditionOfThePersonsIsNoRequest(t *testing.T) {
	for _, text := range []string{
		"If we sign up, can we unsubscribe our drivers from the weekly digest?",
		"If I unsubscribe later, do I lose access to the free report?",
		"Wenn wir kündigen, werden dann unsere Daten gelöscht?",
		"Si je m'inscris, pouvez-vous supprimer mes données à la fin de l'essai ?",
		"Si nos damos de baja más adelante, ¿se borran nuestros datos?",
	} {
		requireNoRequest(t, reply(text), classify.Question)
	}
	for _, text := range []string{"If possible, could you remove me from your list?",
		"If I have to ask you again to remove me, I'll report you.", "If you don't mind, please stop emailing me."} {
		requireRequest(t, reply(text))
	}
}

// TestAQuestionOnAConditionOfAnImpersonalSubjectIsNoRequest: a question that opens with a condition on an
// impersonal or generic subject (one, you, man, on, uno, se) asks about the process of opting out, in each
// language, as a condition on the person does; the person or their data as the object of the opt-out keeps
// a polite question a request (if you can, could you unsubscribe me?).
func TestAQuestionOnAConditionOfAnImpersonalSubjectIsNoRequest(t *testing.T) {
	for _, text := range []string{
		"If one signs up for the pilot, is it easy to unsubscribe afterwards?",
		"If you try the tool for a month and it's not for you, can you just unsubscribe?",
		"Wenn man das Abo eine Woche testet, kann man sich danach jederzeit abmelden?",
		"Si l'on essaie l'outil un mois, peut-on se désinscrire à tout moment ?",
		"Si uno prueba la herramienta un mes, ¿puede darse de baja cuando quiera?",
		"Si se prueba el servicio y no sirve, ¿es fácil darse de baja?",
	} {
		requireNoRequest(t, reply(text), classify.Question)
	}
	for _, text := range []string{"If you can, could you unsubscribe me today?",
		"If you get a moment, can you delete my personal data?", "Si se puede, ¿pueden darme de baja hoy mismo?"} {
		requireRequest(t, reply(text))
	}
}

// TestAClauseOfConsequenceAfterTheInvitedWordSaysWhatItDoes: our message may say what a reply does in the
// clause after the invited word (reply NO, and I won't write again), in each language; that clause offering an
// opt-out word of its own makes the first word no opt-out (reply YES to book, and STOP to opt out).
func TestAClauseOfConsequenceAfterTheInvitedWordSaysWhatItDoes(t *testing.T) {
	for text, footer := range map[string]string{
		"No":   "Not a fit? Reply NO, and I won't write again.",
		"Nein": "Kein Bedarf? Schreiben Sie „Nein“, und ich schreibe Ihnen nicht mehr.",
		"non":  "Pas pour vous ? Répondez « non », et je ne vous écrirai plus.",
		"no":   "¿No le interesa? Responda NO, y no le escribiré más.",
	} {
		v := requireRequest(t, reply(quoting(text, footer)))
		require.Equal(t, "invited_opt_out", v.Evidence[0].Name, "%q", footer)
	}
	requireNoRequest(t, reply(quoting("Yes", "Reply YES to book a slot, and STOP to opt out.")), classify.Positive)
}

// TestAnInitialOfTheSendersNameSignsAShortAnswer: a short answer signed with an initial and the sender's name
// (No thanks. A. Doyle) is read as the answer alone, so the word our message invited is heard; without the
// invitation it stays a decline.
func TestAnInitialOfTheSendersNameSignsAShortAnswer(t *testing.T) {
	footer := "Not for you? Reply no and I'll stop writing."
	v := requireRequest(t, reply(quoting("No thanks.\n\nA. Doyle", footer)))
	require.Equal(t, "invited_opt_out", v.Evidence[0].Name)
	requireNoRequest(t, reply(quoting("No thanks.\n\nA. Doyle", "Open to a chat next week?")), classify.Negative)
}

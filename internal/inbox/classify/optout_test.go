package classify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// reply is a person's reply to a campaign message whose text is text, sent by Anne-Marie Doyle.
func reply(text string) classify.Message {
	return classify.Message{Subject: "Re: Fuel spend at Coastal Greens", Text: text, From: "amdoyle@coastalgreens.com",
		FromName: "Anne-Marie Doyle"}
}

// quoting is text above our quoted message, which ends with footer.
func quoting(text, footer string) string {
	return text + "\n\nOn Mon, Sep 14, 2026 at 2:03 PM Maya Chen <maya@fleetwise-mail.com> wrote:\n\n> Hi Anne-Marie,\n>\n" +
		"> Fleetwise sends your ops team a weekly list of what to fix.\n> Open to a quick chat this month?\n>\n> Maya Chen\n>\n> " + footer + "\n"
}

func requireRequest(t *testing.T, m classify.Message) classify.Verdict {
	t.Helper()
	v := judge(t, m)
	require.True(t, v.Unsubscribe, "%q: not taken for a request: %s %v", m.Text, v.Intent, v.Evidence)
	require.Equal(t, classify.Negative, v.Intent, m.Text)
	require.NotContains(t, []string{"opt_out_mention", "no_signal"}, v.Evidence[0].Name, m.Text)
	return v
}

func requireNoRequest(t *testing.T, m classify.Message, want classify.Intent) classify.Verdict {
	t.Helper()
	v := judge(t, m)
	require.False(t, v.Unsubscribe, "%q: taken for a request: %v", m.Text, v.Evidence)
	require.Equal(t, want, v.Intent, "%q: %v", m.Text, v.Evidence)
	return v
}

// TestAWholeMessageOfOptOutWordsIsARequest: STOP, UNSUBSCRIBE, remove me and their German, French and Spanish
// forms are requests on their own, with a greeting, a courtesy or the sender's name around them, or as one
// sentence of a longer reply; the evidence names the rule and the words.
func TestAWholeMessageOfOptOutWordsIsARequest(t *testing.T) {
	for _, text := range []string{"STOP", "Stop.", "stop!!!", "UNSUBSCRIBE", "Remove me", "unsubscribe please",
		"Hi Maya,\n\nSTOP\n\nThanks", "STOP\n\nAnne-Marie", "STOP\nAMD", "Abmelden bitte", "Stopp.", "Bitte austragen",
		"Désinscription", "STOP merci", "Baja", "Baja, gracias.", "STOP. I have asked you three times already.",
		quoting("STOP", "Not interested? Reply STOP and I won't follow up.")} {
		v := requireRequest(t, reply(text))
		require.Contains(t, []string{"opt_out_word", "unsubscribe"}, v.Evidence[0].Name, text)
	}
}

// TestPoliteAndFormalRequestsAreRequestsInEachLanguage: requests that name no opt-out word (do not contact me
// again, von weiteren Zusendungen absehen, ne plus me contacter, no me vuelvan a escribir) are requests.
func TestPoliteAndFormalRequestsAreRequestsInEachLanguage(t *testing.T) {
	for _, text := range []string{
		"I would appreciate it if you did not contact me again.",
		"Kindly refrain from contacting us further.",
		"Please take me off your mailing list.",
		"I'd prefer not to receive any more emails from you.",
		"Please don't email me again.",
		"No more emails, please.",
		"I no longer wish to receive these messages.",
		"Could you please remove my address from your database?",
		"Please leave me alone.",
		"Bitte sehen Sie künftig von weiteren Zusendungen ab.",
		"Ich bitte um Unterlassung weiterer Zusendungen an diese Adresse.",
		"Bitte kontaktieren Sie mich nicht mehr.",
		"Ich möchte keine weiteren E-Mails von Ihnen erhalten.",
		"Bitte nehmen Sie mich aus Ihrem Verteiler.",
		"Ich wünsche keine weitere Kontaktaufnahme.",
		"Merci de ne plus me contacter.",
		"Je vous prie de ne plus m'adresser de messages.",
		"Je ne souhaite plus recevoir vos e-mails.",
		"Veuillez me retirer de votre liste de diffusion.",
		"Ne m'écrivez plus, s'il vous plaît.",
		"Les agradecería que no me enviaran más correos.",
		"Por favor, no me vuelvan a escribir.",
		"Dejen de enviarme correos.",
		"Quisiera darme de baja de su lista.",
		"No deseo recibir más comunicaciones.",
	} {
		requireRequest(t, reply(text))
	}
}

// TestErasureRequestsAreRequests: asking for one's data to be deleted (GDPR, DSGVO, RGPD) is a request.
func TestErasureRequestsAreRequests(t *testing.T) {
	for _, text := range []string{"Please delete my personal data.", "Under GDPR I ask you to erase my data.",
		"Bitte löschen Sie meine Daten gemäß Art. 17 DSGVO.", "Je demande la suppression de mes données personnelles.",
		"Solicito la supresión de mis datos."} {
		requireRequest(t, reply(text))
	}
}

// TestAnswerWithTheWordOurMessageInvitedIsARequest: "no" or "non" is an opt-out when the quoted message said
// to reply so to opt out (in a text or an HTML quote); without that invitation, or when our message invited
// the word for something else, a bare no is a decline.
func TestAnswerWithTheWordOurMessageInvitedIsARequest(t *testing.T) {
	v := requireRequest(t, reply(quoting("no", `If this isn't relevant, reply "no" and I'll stop writing.`)))
	require.Equal(t, "invited_opt_out", v.Evidence[0].Name)
	require.Equal(t, "no as invited: reply no and i'll stop", v.Evidence[0].Value)
	requireRequest(t, reply(quoting("No thanks", `If this isn't relevant, reply "no" and I'll stop writing.`)))
	requireRequest(t, reply("non\n\nLe ven. 23 oct. 2026 à 01:21, Léa Dupont <lea@terrain.fr> a écrit :\n\n> Bonjour Didier,\n>\n"+
		"> Vous ne souhaitez plus être contacté(e) ? Répondez simplement « non ».\n"))
	requireRequest(t, reply(quoting("Nein", "Kein Interesse? Antworten Sie mit „Nein“ und ich melde mich nicht mehr.")))
	requireRequest(t, classify.Message{Subject: "Re: Fuel", HTML: `<div>No</div><div class="gmail_quote"><blockquote>` +
		`Open to a chat?<br>Reply <b>NO</b> and you won't hear from me again.</blockquote></div>`})

	v = requireNoRequest(t, reply("No."), classify.Negative)
	require.Equal(t, classify.Evidence{Kind: "rule", Name: "refusal", Value: "no"}, v.Evidence[0])
	requireNoRequest(t, reply(quoting("no", "Reply YES and I'll send over the deck.")), classify.Negative)
	requireNoRequest(t, reply(quoting("No.", "If you would rather not hear from me, reply and let me know.")), classify.Negative)
}

// TestMentioningOptingOutIsNoRequestAndTheReplysOwnIntentStands: a remark about the unsubscribe link, a
// negated opt-out (don't stop sending these), our footer named or pasted, reported speech and a product
// question are no requests; the verdict keeps the reply's own intent and says, in its evidence, what it set
// aside.
func TestMentioningOptingOutIsNoRequestAndTheReplysOwnIntentStands(t *testing.T) {
	for text, want := range map[string]classify.Intent{
		"FYI your unsubscribe link looks broken. What's your pricing for 20 seats?":                 classify.Question,
		"Please don't remove me, I'm just busy this month. Let's talk in August.":                   classify.Positive,
		"No need to unsubscribe me, I moved to a new role. Happy to chat next week.":                classify.Positive,
		"Does your tool handle unsubscribe requests automatically?":                                 classify.Question,
		"Der Link zum Abmelden funktioniert übrigens nicht. Was kostet das Tool?":                   classify.Question,
		"Pas besoin de me désinscrire, je change juste de poste. Envoyez-moi plus d'informations.":  classify.Positive,
		"Thanks, but not now.\n\nDon't want to hear from us? Unsubscribe: https://x.example/u/1":    classify.Negative,
		"If you want to opt out your customers, is that one click for them? How much does it cost?": classify.Question,
	} {
		v := requireNoRequest(t, reply(text), want)
		found := false
		for _, e := range v.Evidence {
			found = found || e.Name == "opt_out_mention"
		}
		require.True(t, found, "%q: the mention is not in the evidence: %v", text, v.Evidence)
	}
	v := requireNoRequest(t, reply("Don't stop sending these, they're really useful!"), classify.Neutral)
	require.Equal(t, "opt_out_mention", v.Evidence[len(v.Evidence)-1].Name)
	require.Contains(t, v.Evidence[len(v.Evidence)-1].Value, "negated")
	requireNoRequest(t, reply("Your email says to reply STOP if I'm not interested. I am interested though, can we book a call?"),
		classify.Positive)
	requireNoRequest(t, reply("Feel free to contact me again in the new year."), classify.Neutral)
	requireNoRequest(t, reply("Please don't contact me until March, we're mid-migration."), classify.Neutral)
	requireNoRequest(t, reply("Don't hesitate to email me again if anything changes."), classify.Neutral)
	requireNoRequest(t, reply("Is your tool GDPR compliant? Where is the data stored?"), classify.Question)
}

// TestARequestOutranksEveryOtherIntent: a request wins over interest, a question, and out-of-office text from a
// person; an auto-reply (by its headers) is never one.
func TestARequestOutranksEveryOtherIntent(t *testing.T) {
	for _, text := range []string{"Sounds interesting, but please remove me from your list.",
		"How much does it cost? Either way, stop emailing me.",
		"I'm on vacation until Monday. In any case, please unsubscribe me.",
		quoting("Not interested, take me off your list.", "Not interested? Reply STOP and I won't follow up.")} {
		requireRequest(t, reply(text))
	}
	m := reply("I'm out of the office until Monday with limited access to email. To unsubscribe from our newsletter, click here.")
	m.Headers = map[string][]string{"Auto-Submitted": {"auto-replied"}}
	requireNoRequest(t, m, classify.OutOfOffice)
}

// TestAnUnsubscribeSubjectWithoutTextIsARequest: a mail client's unsubscribe message (Subject: unsubscribe,
// no text) is a request.
func TestAnUnsubscribeSubjectWithoutTextIsARequest(t *testing.T) {
	v := requireRequest(t, classify.Message{Subject: "unsubscribe", From: "amdoyle@coastalgreens.com"})
	require.Equal(t, classify.Evidence{Kind: "subject", Name: "unsubscribe", Value: "unsubscribe"}, v.Evidence[0])
}

// TestCommonDeclinesAreNegativeInEachLanguage: replies that decline without an opt-out word are negative,
// and no request.
func TestCommonDeclinesAreNegativeInEachLanguage(t *testing.T) {
	for _, text := range []string{"We just signed with another vendor, so we'll pass for now.",
		"We're happy with our current provider.", "Thanks, we have that covered in-house.",
		"Wir sind mit unserer aktuellen Lösung sehr zufrieden.", "Das brauchen wir nicht, danke.",
		"Nous sommes satisfaits de notre solution actuelle.", "Ce n'est pas le moment pour nous.",
		"Estamos contentos con nuestro proveedor actual.", "De momento no, gracias."} {
		requireNoRequest(t, reply(text), classify.Negative)
	}
}

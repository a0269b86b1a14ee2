package classify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnElisionIsAWordOfItsOwnAndAContractionStaysWhole: l'effacement is l' and effacement, jusqu'au is
// jusqu' and au, quotes around a word fall away, and don't, i'm and aujourd'hui stay one word.
func TestAnElisionIsAWordOfItsOwnAndAContractionStaysWhole(t *testing.T) {
	require.Equal(t, []string{"l'", "effacement", "de", "mes", "donnees"}, tokens(fold("L’effacement de mes données")))
	require.Equal(t, []string{"jusqu'", "au", "qu'", "il", "m'", "ecrive"}, tokens(fold("jusqu'au qu'il m'écrive")))
	require.Equal(t, []string{"reply", "no", "customers", "l'"}, tokens(fold("reply 'no' customers' l'")))
	require.Equal(t, []string{"don't", "i'm", "aujourd'hui"}, tokens(fold("don't I'm aujourd'hui")))
	words, at := segment(fold("Merci d'arrêter, s'il vous plaît."))
	require.Equal(t, []string{"merci", "d'", "arreter", "s'", "il", "vous", "plait"}, words)
	require.Len(t, at, len(words))
	require.Equal(t, at[0].clause, at[2].clause)
	require.NotEqual(t, at[2].clause, at[3].clause)
	require.Equal(t, "merci d'arreter", joinWords(words[:3]))
}

// TestTheQuoteHeadersOfTheMajorClientsEndThePersonsText: the attribution lines and header blocks of Gmail,
// Apple Mail, Thunderbird, Yahoo, Zoho, Proton, Outlook, GMX and Samsung in English, German, French and
// Spanish end the person's own text (wrapped, framed by dashes or bold), so nothing of the quote (its time,
// its questions) is read as the person's.
func TestTheQuoteHeadersOfTheMajorClientsEndThePersonsText(t *testing.T) {
	r, err := NewRules()
	require.NoError(t, err)
	for _, header := range []string{
		"On Mon, Sep 14, 2026 at 9:12 AM Maya Chen <maya@routeline-mail.com> wrote:",
		"On Mon, Sep 14, 2026 at 9:12 AM Maya Chen <\nmaya@routeline-mail.com> wrote:",
		"Am Mo., 14. Sept. 2026 um 09:12 Uhr schrieb Felix Wagner <felix@belegfix-mail.de>:",
		"Am Mo., 14. Sept. 2026 um 09:12 Uhr schrieb Felix Wagner <\nfelix@belegfix-mail.de>:",
		"Le lun. 14 sept. 2026 à 09:12, Léa Dupont <lea@planeo-mail.fr> a écrit :",
		"El lun, 14 sept 2026 a las 9:12, Lucía Romero (<lucia@nominas-mail.es>) escribió:",
		"On 14 Sep 2026, at 09:12, Maya Chen <maya@routeline-mail.com> wrote:",
		"Am 14.09.2026 um 09:12 schrieb Felix Wagner <felix@belegfix-mail.de>:",
		"Le 14 sept. 2026 à 09:12, Léa Dupont <lea@planeo-mail.fr> a écrit :",
		"El 14 sept 2026, a las 9:12, Lucía Romero <lucia@nominas-mail.es> escribió:",
		"On 14/09/2026 09:12, Maya Chen wrote:",
		"Am 14.09.26 um 09:12 schrieb Felix Wagner:",
		"Le 14/09/2026 à 09:12, Léa Dupont a écrit :",
		"El 14/9/26 a las 9:12, Lucía Romero escribió:",
		"On Monday, September 14, 2026, 09:12:03 AM GMT+2, Maya Chen <maya@routeline-mail.com> wrote:",
		"Am Montag, 14. September 2026, 09:12:03 MESZ hat Felix Wagner <felix@belegfix-mail.de> Folgendes geschrieben:",
		"---- On Mon, 14 Sep 2026 09:12:00 +0200 Maya Chen <maya@routeline-mail.com> wrote ----",
		"---- Am Mo, 14 Sep 2026 09:12:00 +0200 schrieb Felix Wagner <felix@belegfix-mail.de> ----",
		"------- Original Message -------\nOn Monday, September 14th, 2026 at 09:12, Maya Chen <maya@routeline-mail.com> wrote:",
		"From: Maya Chen <maya@routeline-mail.com>\nSent: Monday, September 14, 2026 9:12 AM\nTo: Ben Carter\nSubject: Fuel",
		"*From:* Maya Chen <maya@routeline-mail.com>\n*Sent:* Monday, September 14, 2026 9:12 AM\n*Subject:* Fuel",
		"Von: Felix Wagner <felix@belegfix-mail.de>\nGesendet: Montag, 14. September 2026 09:12\nAn: Jörg\nBetreff: Belege",
		"De : Léa Dupont <lea@planeo-mail.fr>\nEnvoyé : lundi 14 septembre 2026 09:12\nÀ : Alain\nObjet : Plannings",
		"De: Lucía Romero <lucia@nominas-mail.es>\nEnviado el: lunes, 14 de septiembre de 2026 9:12\nPara: Carmen\nAsunto: Nóminas",
		"Gesendet: Montag, 14. September 2026 um 09:12 Uhr\nVon: \"Felix Wagner\" <felix@belegfix-mail.de>\nAn: Jörg\nBetreff: Belege",
		"-------- Original-Nachricht --------\nBetreff: Belege\nDatum: 14.09.2026 09:12",
		"-------- Ursprüngliche Nachricht --------\nVon: Felix Wagner",
		"-------- Message d'origine --------\nDe : Léa Dupont",
		"-------- Mensaje original --------\nDe: Lucía Romero",
		"-------- Original message --------\nFrom: Maya Chen",
	} {
		text := "Kein Bedarf, danke.\n\n" + header + "\n\nHätten Sie Dienstag um 10:30 Uhr Zeit? Interested in a call?\n"
		own, lines, cut := r.split(text)
		require.Equal(t, "Kein Bedarf, danke.\n", own, header)
		require.Contains(t, quoted(lines, cut), "10:30", header)
	}
}

// TestAReplyBelowTheQuoteIsThePersonsText: a reply written under a quote (attribution line, quoted lines,
// then the person's text) is read from below the quote.
func TestAReplyBelowTheQuoteIsThePersonsText(t *testing.T) {
	r, err := NewRules()
	require.NoError(t, err)
	own, _, _ := r.split("Am 14.09.26 um 09:12 schrieb Felix Wagner:\n> Hätten Sie Dienstag um 10:30 Uhr Zeit?\n\nKein Bedarf, danke.\n")
	require.Equal(t, "Kein Bedarf, danke.", strings.TrimSpace(own))
}

// TestALineOpeningLikeAnAttributionIsThePersonsOwn: a line of the person's that starts with On or Am but has
// no date, or no verb of writing, is not a quote header.
func TestALineOpeningLikeAnAttributionIsThePersonsOwn(t *testing.T) {
	r, err := NewRules()
	require.NoError(t, err)
	for _, text := range []string{"On Tuesday my colleague wrote: let's talk.\nThanks", "Am 14. passt es mir gut:\nDanke",
		"On the 14th at 10:00 we could talk:\nThanks"} {
		own, _, _ := r.split(text)
		require.Equal(t, text, own, text)
	}
}

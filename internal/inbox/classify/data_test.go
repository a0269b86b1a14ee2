package classify

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryLanguageShipsValidLists reads each embedded data file and checks every list is non-empty,
// lower-case, trimmed and free of repeats, and every month number is a month.
func TestEveryLanguageShipsValidLists(t *testing.T) {
	data, err := readData()
	require.NoError(t, err)
	require.Len(t, data, len(Languages))
	for lang, l := range data {
		require.NoError(t, l.validate(), "data/%s.json", lang)
	}
}

// TestValidationRejectsAnUpperCaseOrRepeatedEntry proves the validation can fail.
func TestValidationRejectsAnUpperCaseOrRepeatedEntry(t *testing.T) {
	data, err := readData()
	require.NoError(t, err)
	l := data["en"]
	l.Positive = append([]string{}, l.Positive...)
	l.Positive = append(l.Positive, "Interested")
	require.ErrorContains(t, l.validate(), "not lower-case")
	l.Positive[len(l.Positive)-1] = "sounds  good"
	require.NoError(t, l.validate())
	l.Positive[len(l.Positive)-1] = l.Positive[0]
	require.ErrorContains(t, l.validate(), "repeated")
}

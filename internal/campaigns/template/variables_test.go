package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/template"
)

func TestVariablesListEveryVariableAsWrittenWithItsKindKeyAndFallback(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse(`{Hi|Hello} {{.first_name | default "there"}}, {{.Custom.Industry}} at {{.Company}}` +
		` {{.team_size}} {{.App.crm.owner.name}} {{.Sender.FirstName}} {{.Signature}} {{.Campaign.Name}} {{.FirstName}}`)
	require.NoError(t, err)
	require.Equal(t, []template.Variable{
		{Name: "first_name", Kind: template.VariableContact, HasFallback: true},
		{Name: "Custom.Industry", Kind: template.VariableCustom, Key: "Industry"},
		{Name: "Company", Kind: template.VariableContact},
		{Name: "team_size", Kind: template.VariableCustom, Key: "team_size"},
		{Name: "App.crm.owner.name", Kind: template.VariableApp, Key: "crm"},
		{Name: "Sender.FirstName", Kind: template.VariableSender},
		{Name: "Signature", Kind: template.VariableSender},
		{Name: "Campaign.Name", Kind: template.VariableCampaign},
		{Name: "FirstName", Kind: template.VariableContact},
	}, tpl.Variables())

	nested, err := template.Parse("{a {{.City}}|{b|{{.App.lookup.x}}}}")
	require.NoError(t, err)
	require.Equal(t, []template.Variable{
		{Name: "City", Kind: template.VariableCustom, Key: "City"},
		{Name: "App.lookup.x", Kind: template.VariableApp, Key: "lookup"},
	}, nested.Variables(), "variables inside spintax options, nested ones too, are listed")

	plain, err := template.Parse("no variables { here }")
	require.NoError(t, err)
	require.Empty(t, plain.Variables())
}

func TestVariableMatchesKeysAsRenderingLooksThemUp(t *testing.T) {
	t.Parallel()
	tpl, err := template.Parse("{{.Custom.team_size}} {{.FirstName}}")
	require.NoError(t, err)
	vars := tpl.Variables()
	custom, contact := vars[0], vars[1]
	for _, key := range []string{"team_size", "TeamSize", "team-size", "Team Size"} {
		require.True(t, custom.Matches(key), key)
	}
	require.False(t, custom.Matches("team"))
	require.False(t, custom.Matches("team_sizes"))
	require.False(t, contact.Matches(""), "a standard field matches no key, not even an empty one")
	require.False(t, contact.Matches("FirstName"))

	// What Matches accepts is what rendering fills in.
	m, err := template.ParseMessage("", "{{.Custom.team_size}}", "")
	require.NoError(t, err)
	r := m.Render(&template.Data{Contact: template.Contact{Custom: map[string]string{"Team Size": "12"}}}, template.Options{})
	require.Equal(t, "12", r.Plain)
}

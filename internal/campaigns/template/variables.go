package template

// VariableKind says what a variable reads, so a check made before any contact exists (campaign validation)
// can tell which variables the data of a send will fill and which depend on the contact or an earlier step.
type VariableKind uint8

// The kinds of variable, one per source of values.
const (
	// VariableContact is a standard contact field: FirstName, LastName, FullName, Email, Company, Phone.
	VariableContact VariableKind = iota
	// VariableCustom is a contact custom field, written {{.Custom.<key>}} or {{.<key>}}; Key names it.
	VariableCustom
	// VariableSender is the sending mailbox's Name, FirstName, Email or Signature.
	VariableSender
	// VariableCampaign is the campaign's Name.
	VariableCampaign
	// VariableApp is a value captured by an app_action step, written {{.App.<output_key>.<field>}}; Key is the
	// output key.
	VariableApp
)

// Variable is one variable a template names, as a person wrote it.
type Variable struct {
	// Name is the path as written, without the leading dot ("first_name", "Custom.industry", "App.crm.owner"):
	// the name Rendered.Unresolved would report.
	Name string
	Kind VariableKind
	// Key is the custom-field key of a VariableCustom or the output key of a VariableApp, as written; empty
	// for the other kinds.
	Key string
	// HasFallback reports a default ({{.FirstName | default "there"}}): such a variable always renders.
	HasFallback bool
}

// Variables lists the variables t names, every occurrence in document order, those inside spintax options
// included (any option may be the one a contact gets).
func (t *Template) Variables() []Variable {
	out := make([]Variable, 0, len(t.vars))
	for _, v := range t.vars {
		x := Variable{Name: v.name, HasFallback: v.hasDefault}
		switch v.field {
		case fieldFirstName, fieldLastName, fieldFullName, fieldEmail, fieldCompany, fieldPhone:
			x.Kind = VariableContact
		case fieldCustom:
			x.Kind, x.Key = VariableCustom, v.keys[0]
		case fieldSenderName, fieldSenderFirstName, fieldSenderEmail, fieldSignature:
			x.Kind = VariableSender
		case fieldCampaignName:
			x.Kind = VariableCampaign
		case fieldApp:
			x.Kind, x.Key = VariableApp, v.keys[0]
		}
		out = append(out, x)
	}
	return out
}

// Matches reports whether key (a custom-field key or an app_action output key) is the one v reads, by the
// rule rendering applies: exactly, or else ignoring case, underscores, spaces and dashes. A variable of
// another kind matches no key.
func (v Variable) Matches(key string) bool {
	return v.Key != "" && (key == v.Key || normEqual(key, normalize(v.Key)))
}

// PlacesSignature reports whether a body of m inserts the sender's signature ({{.Signature}}): such a message
// carries it where its author put it, and the send pipeline must not append it a second time.
func (m *Message) PlacesSignature() bool {
	for _, t := range []*Template{m.Plain, m.HTML} {
		if t == nil {
			continue
		}
		for _, v := range t.vars {
			if v.field == fieldSignature {
				return true
			}
		}
	}
	return false
}

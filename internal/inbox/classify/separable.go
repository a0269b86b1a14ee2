package classify

// separableReach is how far before its particle at the end of a clause a German verb's finite stem is looked
// for (Tragen Sie mich bitte ab sofort aus).
const separableReach = 8

// separableParticles are the German verb particles that go to the end of the clause when the verb is finite
// (austragen: tragen Sie mich aus; abmelden: melden Sie mich bitte ab; aufhören: hören Sie endlich auf).
var separableParticles = map[string]bool{"ab": true, "auf": true, "aus": true, "ein": true, "heraus": true, "raus": true}

// joinSeparable gives a German verb split by its finite form the roles of the whole verb: a particle that
// ends its clause and a word up to separableReach before it in the clause that, joined to it as an infinitive,
// is a word of the opt-out lists (tragen … aus is austragen, melden … ab abmelden, hört … auf aufhören,
// stellen … ein einstellen). Both words play the whole verb's roles, so the rules read "Hören Sie endlich
// auf, mich anzuschreiben" as they read "Hören Sie auf, mich anzuschreiben".
func (c *judgement) joinSeparable() {
	for p := range c.words {
		if !separableParticles[c.words[p]] || (p+1 < len(c.words) && c.at[p+1].clause == c.at[p].clause) {
			continue
		}
		for v := p - 1; v >= max(0, p-separableReach) && c.at[v].clause == c.at[p].clause; v-- {
			if rl := c.joinedRoles(c.words[p], c.words[v]); rl != 0 {
				c.marks[v] |= rl
				c.marks[p] |= rl
				break
			}
		}
	}
}

// separableRoles are the roles a joined verb must play to count: a word of opting out, removing, stopping or
// contacting.
const separableRoles = roleWord | roleRemove | roleStop | roleMore | roleCease | roleContact

// joinedRoles answers the opt-out roles of the particle joined to the finite form w as an infinitive (trage,
// tragt, trag: austragen; meldet: abmelden; hört: aufhören), or 0.
func (c *judgement) joinedRoles(particle, w string) role {
	forms := []string{w, w + "n", w + "en"}
	if n := len(w); n > 2 && w[n-1] == 't' {
		forms = append(forms, w[:n-1]+"en")
		if w[n-2] == 'e' {
			forms = append(forms, w[:n-2]+"en")
		}
	}
	for _, f := range forms {
		if rl := c.r.markers.mark([]string{particle + f})[0] & separableRoles; rl != 0 {
			return rl
		}
	}
	return 0
}

package classify

// negatedContact requests an unsubscribe for a verb of contacting with the person as its object, or a noun of
// mailings, that has a stop word and a more word near it in its clause (I would appreciate it if you did
// not contact me again; keine weiteren Zusendungen; ne me contactez plus), unless the clause bounds it in
// time or by an idiom (don't contact me until March; don't hesitate to contact me again), negates the stop
// (don't stop sending these), redirects it, or only talks about it (quoted, reported). A noun of mailings the
// person sends themselves is none (see sends).
func (c *judgement) negatedContact(covered []bool) {
	for i, m := range c.marks {
		if (covered != nil && covered[i]) || m&(roleContact|roleChannel) == 0 {
			continue
		}
		sp := c.clause(i)
		lo, hi := sp.lo, sp.hi
		var stop, more int
		object := i
		switch {
		case m&roleContact != 0 && c.objectOf(i, sp, roleObject, 2) >= 0:
			object = c.objectOf(i, sp, roleObject, 2)
			if c.marks[object]&rolePerson == 0 && c.has(max(lo, i-2), i, roleSelf) {
				continue // the person's own contacting of others: we never email anyone twice
			}
			for object > i && object+1 < min(hi, i+maxObjectGap) && c.marks[object+1]&roleObject != 0 {
				object++ // the whole object: our staff, nuestro equipo
			}
			stop = c.near(i, lo, hi, 5, 4, roleStop)
			more = c.near(i, lo, hi, 5, 5, roleMore)
			if stop < 0 {
				// Bitte unterlassen Sie es, mich weiter zu kontaktieren: the verb of ceasing governs the next clause.
				stop = c.ceasingBefore(lo)
				if more < 0 {
					more = stop
				}
			}
		case m&roleChannel != 0 && !c.sends(sp, i):
			stop = c.near(i, lo, hi, 4, 2, roleStop)
			more = c.near(i, lo, hi, 3, 1, roleMore)
			if stop < 0 {
				stop = c.ceasingBefore(lo) // Hören Sie auf, mir Mails zu schicken.
				if more < 0 {
					more = stop
				}
			}
		default:
			continue
		}
		if stop < 0 || more < 0 || sp.blocker {
			continue
		}
		from, to := min(i, stop, more), max(i, stop, more)+1
		for to < min(hi, i+maxObjectGap) && c.marks[to-1]&roleChannel != 0 && c.marks[to]&roleChannel != 0 {
			to++ // the whole noun: E-Mails
		}
		switch {
		case c.ceasingNegated(stop) || c.ceasingNegated(more):
			c.mention("negated", lo, hi)
		case c.at[i].quoted:
			c.mention("quoted", lo, hi)
		case c.hypothetical(min(from, object), max(to, object+1), sp):
			c.mention("hypothetical", lo, hi)
		case sp.mention < from && !c.desired(from, sp):
			c.mention("reported", lo, hi)
		case sp.redirect:
			c.mention("redirected", lo, hi)
		case m&roleContact != 0 && c.anotherThing(i, object, sp):
			c.mention("another thing wanted", lo, hi)
		default:
			c.request(Evidence{Kind: "rule", Name: "opt_out_request", Value: c.text(min(from, object), max(to, object+1))})
			return
		}
	}
}

// ceasingBefore answers a verb of ceasing (a stop word that is also a word of going on: unterlassen, hören
// Sie auf, refrain, cessez) among the last words of the clause before the one starting at lo, in the same
// sentence, or -1; not past a verb of contacting of its own, which it governs instead (dejen de mandarme
// PDFs, mándenme un enlace).
func (c *judgement) ceasingBefore(lo int) int {
	for j := lo - 1; j >= max(0, lo-cancelWindow) && c.at[j].sentence == c.at[lo].sentence; j-- {
		if c.marks[j]&(roleStop|roleMore) == roleStop|roleMore {
			return j
		}
		if c.marks[j]&roleContact != 0 && c.marks[j]&roleChannel == 0 {
			return -1
		}
	}
	return -1
}

// near answers the nearest word playing rl from i (itself first: recontacté is again) within before words
// before it and after words after it, in the clause [lo, hi); -1 when there is none.
func (c *judgement) near(i, lo, hi, before, after int, rl role) int {
	if c.marks[i]&rl != 0 {
		return i
	}
	for d := 1; d <= max(before, after); d++ {
		if j := i - d; d <= before && j >= lo && c.marks[j]&rl != 0 {
			return j
		}
		if j := i + d; d <= after && j < hi && c.marks[j]&rl != 0 {
			return j
		}
	}
	return -1
}

// ceasingNegated says whether word k is a verb of ceasing with a negation just before it, which asks mail to
// go on (don't stop sending these; n'arrêtez pas de m'envoyer vos analyses; no dejen de mandarme sus
// novedades; bitte nicht aufhören, mir Mails zu schicken).
func (c *judgement) ceasingNegated(k int) bool {
	if c.marks[k]&(roleWord|roleCease) == 0 {
		return false
	}
	lo := k // the clause's start, read no farther back than cancelled looks
	for lo > max(0, k-cancelWindow) && c.at[lo-1].clause == c.at[k].clause {
		lo--
	}
	return c.cancelled(k, lo)
}

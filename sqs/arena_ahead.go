package sqs

// regionsAhead maps regions of one size on another goroutine, ahead of a
// restore that fills them one after another: the kernel's zeroing of the
// engine's new memory (a third of a recovery's CPU with 1 KiB bodies) then
// runs on the second core while the first decodes. At most aheadRegions
// are mapped and not yet taken; the goroutine that maps them exits after
// each round, so a Restorer dropped unused leaves no goroutine behind.
// It is used by one goroutine (the Restorer's).
type regionsAhead struct {
	size  int
	ready chan []byte   // mapped, zeroed regions not yet taken
	done  chan struct{} // closed when the current round's goroutine exits; nil: none ran
}

// aheadRegions is how many regions a regionsAhead maps before they are
// asked for: a few milliseconds of a restore's work, a few MiB of memory.
const aheadRegions = 8

func newRegionsAhead(size int) *regionsAhead {
	return &regionsAhead{size: size, ready: make(chan []byte, aheadRegions)}
}

// take returns a zeroed region of a.size bytes, mapped ahead when one is
// ready, and has more mapped when few are left.
func (a *regionsAhead) take() region {
	var r region
	select {
	case b := <-a.ready:
		offHeap.Add(int64(len(b)))
		r = region{b: b, mapped: true}
	default:
		r = allocRegion(a.size, true) // none ready yet: map it here
	}
	a.refill()
	return r
}

// refill starts a round that maps what the channel has room for, unless
// one runs: a round started at every take it finds none running keeps
// the lead whole, which the decoding, about as fast as the kernel's
// zeroing, would soon use up otherwise.
func (a *regionsAhead) refill() {
	if a.done != nil {
		select {
		case <-a.done:
		default:
			return // a round runs
		}
	}
	n := cap(a.ready) - len(a.ready)
	if n == 0 {
		return
	}
	done := make(chan struct{})
	a.done = done
	go func() {
		defer close(done)
		for range n { // only take empties the channel: never blocks
			b := mapRegion(a.size)
			if b == nil {
				return // take maps its own, and says so if it cannot
			}
			a.ready <- b
		}
	}()
}

// stop waits for the round that runs and unmaps what was not taken. It
// may be called again.
func (a *regionsAhead) stop() {
	if a.done != nil {
		<-a.done
	}
	for {
		select {
		case b := <-a.ready:
			unmapRegion(b)
		default:
			return
		}
	}
}

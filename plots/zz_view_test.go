package plots

import "testing"

func TestZZView(t *testing.T) {
	cap4, cap6 := 4.6, 6.2
	ref := SweepSide{"reference: real", []SweepPoint{{1, 65, 214}, {2, 133, 284}, {4, 248, 433}, {8, 1004, 436}}}
	cand := SweepSide{"candidate: sim", []SweepPoint{{1, 101, 182}, {2, 168, 294}, {4, 284, 445}, {8, 814, 474}}}
	tr, _ := SweepTradeoffs(SweepPanel{"Output token throughput vs TTFT p99", "TTFT p99 (ms)", "tokens/s", []SweepSide{ref, cand}},
		SweepPanel{"vs ITL p99", "ITL p99 (ms)", "tokens/s", []SweepSide{ref, cand}})
	SavePNG("/tmp/view/tradeoff.png", tr)
	at, _ := Attainment("SLO attainment", "concurrency", 0.9,
		AttainmentSide{"reference: real", []float64{1, 2, 4, 8}, []float64{1, 1, 0.96, 0.1}, &cap4},
		AttainmentSide{"candidate: sim", []float64{1, 2, 4, 8}, []float64{1, 1, 1, 0.3}, &cap6})
	SavePNG("/tmp/view/attain.png", at)
}

package ledger

import (
	"testing"
	"time"
)

func TestMemberStatsRoll(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	times := func(minutesAgo ...int) []time.Time {
		var ts []time.Time
		for _, m := range minutesAgo {
			ts = append(ts, now.Add(-time.Duration(m)*time.Minute))
		}
		return ts
	}
	full := make([]time.Time, RecentKept)
	for i := range full {
		full[i] = now.Add(-time.Duration(RecentKept-i) * time.Second)
	}
	ninety := 90
	tests := []struct {
		name      string
		in        MemberStats
		hourCount *int
		sales     int
		reward    int64
		recent    int
		lastHour  int
	}{
		{"the same month keeps its counts", MemberStats{Month: nov, MonthSales: 3, MonthReward: 4500}, nil, 3, 4500, 0, 0},
		{"a new month starts again", MemberStats{Month: nov.AddDate(0, -1, 0), MonthSales: 3, MonthReward: 4500}, nil, 0, 0, 0, 0},
		{"times older than an hour leave", MemberStats{Month: nov, Recent: times(90, 61, 60, 10, 0)}, nil, 0, 0, 3, 3},
		{"a full list within the hour takes the store's count", MemberStats{Month: nov, Recent: full}, &ninety, 0, 0, RecentKept, 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.in
			st.Roll(now, tt.hourCount)
			if !st.Month.Equal(nov) || st.MonthSales != tt.sales || st.MonthReward != tt.reward || len(st.Recent) != tt.recent || st.LastHour != tt.lastHour {
				t.Errorf("Roll = month %v, %d sales, %d reward, %d recent, %d last hour; want %v, %d, %d, %d, %d",
					st.Month, st.MonthSales, st.MonthReward, len(st.Recent), st.LastHour, nov, tt.sales, tt.reward, tt.recent, tt.lastHour)
			}
		})
	}
}

func TestMemberStatsKeepsTheLatest(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	st := MemberStats{}
	for i := 0; i < RecentKept+10; i++ {
		st.Recent = append(st.Recent, now.Add(time.Duration(i-RecentKept-10)*time.Second))
	}
	kept := st.KeptRecent(now)
	if len(kept) != RecentKept || !kept[len(kept)-1].Equal(st.Recent[len(st.Recent)-1]) || !kept[0].Equal(st.Recent[10]) {
		t.Errorf("KeptRecent kept %d from %v to %v; want the latest %d", len(kept), kept[0], kept[len(kept)-1], RecentKept)
	}
}

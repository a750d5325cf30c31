package campaign

import "testing"

func TestReward(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ          string
		value, order int64
		want         int64
	}{
		{RewardFixed, 1500, 9790, 1500},
		{RewardPercentage, 10, 9790, 979},
		{RewardPercentage, 10, 9799, 979}, // rounded down to the cent
		{RewardPercentage, 100, 1, 1},
		{RewardPercentage, 15, 1, 0},
	}
	for _, tt := range tests {
		c := Campaign{RewardType: tt.typ, RewardValue: tt.value}
		if got := c.Reward(tt.order); got != tt.want {
			t.Errorf("%s %d of %d = %d, want %d", tt.typ, tt.value, tt.order, got, tt.want)
		}
	}
}

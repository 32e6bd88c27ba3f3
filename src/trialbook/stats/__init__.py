"""Pure statistics: arrays in, frozen result dataclasses out. No files, no terminal."""

from trialbook.stats._board import (
    CostBootstrap,
    RankIntervals,
    paired_cost_bootstrap,
    pareto_front,
    rank_intervals,
)
from trialbook.stats._bootstrap import (
    BootstrapResult,
    CIMethod,
    ColumnWeights,
    clustered_se,
    task_bootstrap,
)
from trialbook.stats._budget import BudgetCurve, budget_curve
from trialbook.stats._discordant import DiscordantSequence, discordant_evalue, discordant_stops
from trialbook.stats._effort import (
    CostSummary,
    EffortSummary,
    Total,
    cost_from_totals,
    cost_summary,
    effort_from_counts,
    effort_summary,
    total_of,
)
from trialbook.stats._interval import wilson_task_interval
from trialbook.stats._paired import (
    McNemarResult,
    PairedDifference,
    holm,
    mcnemar_exact,
    newcombe_paired_ci,
    paired_difference,
    wilson_interval,
)
from trialbook.stats._passk import PassKStep, pass_at_k, pass_hat_k, pass_k_matrix, pass_k_steps
from trialbook.stats._plan import DesignOption, PlanResult, plan_design
from trialbook.stats._sequential import (
    SEQUENCE_METHODS,
    BettingState,
    PairedSequence,
    SequenceLook,
    SequenceMethod,
    race_stops,
    task_order,
)
from trialbook.stats._signflip import (
    EXACT_UP_TO,
    PairedPValues,
    PairedTest,
    mcnemar_interval,
    mcnemar_mid_p,
    paired_p_values,
    paired_test,
)
from trialbook.stats._spending import SpendingSequence, obrien_fleming_bounds, spending_stops
from trialbook.stats._variance import VarianceComponents, variance_components

__all__ = [
    "EXACT_UP_TO",
    "SEQUENCE_METHODS",
    "BettingState",
    "BootstrapResult",
    "BudgetCurve",
    "CIMethod",
    "ColumnWeights",
    "CostBootstrap",
    "CostSummary",
    "DesignOption",
    "DiscordantSequence",
    "EffortSummary",
    "McNemarResult",
    "PairedDifference",
    "PairedPValues",
    "PairedSequence",
    "PairedTest",
    "PassKStep",
    "PlanResult",
    "RankIntervals",
    "SequenceLook",
    "SequenceMethod",
    "SpendingSequence",
    "Total",
    "VarianceComponents",
    "budget_curve",
    "clustered_se",
    "cost_from_totals",
    "cost_summary",
    "discordant_evalue",
    "discordant_stops",
    "effort_from_counts",
    "effort_summary",
    "holm",
    "mcnemar_exact",
    "mcnemar_interval",
    "mcnemar_mid_p",
    "newcombe_paired_ci",
    "obrien_fleming_bounds",
    "paired_cost_bootstrap",
    "paired_difference",
    "paired_p_values",
    "paired_test",
    "pareto_front",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_matrix",
    "pass_k_steps",
    "plan_design",
    "race_stops",
    "rank_intervals",
    "spending_stops",
    "task_bootstrap",
    "task_order",
    "total_of",
    "variance_components",
    "wilson_interval",
    "wilson_task_interval",
]

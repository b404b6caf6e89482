export { decide, type DecideInput, type DecideOutput, type DecisionReason, type RuleDecision } from './decide.js';
export { evaluateCondition, evaluateConditions, stillHolds, type ConditionResult } from './conditions.js';
export {
  checkActionLimit,
  estimatePlanLamports,
  firstOverActionLimit,
  planStepProblem,
  resolveStepAmount,
  type ActionLimitCheck,
} from './amounts.js';
export { DAY_MS, firstLimitBreach, inLastDay, type LimitBreach, type LimitReason } from './limits.js';
export { describeAmount, describeStep, formatDuration, formatPpm, sol } from './format.js';
export { recheckBeforeSigning, type RecheckInput, type RecheckReason, type RecheckResult } from './recheck.js';

/** Side-effect module: registers the evaluation policies (imported by the bundled worker). */
import { registerEvaluationPolicies } from './index.js';

registerEvaluationPolicies();

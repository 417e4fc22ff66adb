export { diff, ownersOf, type AssignmentDiff, type Move } from './diff.js';
export { restartOrder, type RestartStep } from './restart-order.js';

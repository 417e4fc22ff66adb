/** Invalid input to the assignment engine (bad job, duplicate names, bad replica count). */
export class AssignmentInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssignmentInputError';
  }
}

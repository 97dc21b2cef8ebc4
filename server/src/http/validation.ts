import { HttpException, Param, ValidationPipe, type ValidationPipeOptions } from '@nestjs/common';
import { type ValidationArguments, type ValidationError, type ValidatorOptions } from 'class-validator';

/** One reason per property (its first failure); keys no rule names are dropped, not refused. */
const API_VALIDATOR_OPTIONS: ValidatorOptions = { whitelist: true, stopAtFirstError: true, forbidUnknownValues: false };

/** `@Validate(Rule, { context: CROSS_FIELD })`: a rule between two properties, named after every single one's problem. */
export const CROSS_FIELD = { crossField: true } as const;

/** Every bad property by name with the reason of the rule it broke, in the DTO's order, rules between properties last. */
export function problemsOf(errors: ValidationError[]): Record<string, string> {
  const single: [string, string][] = [];
  const between: [string, string][] = [];
  for (const error of errors) {
    const [rule, reason] = Object.entries(error.constraints ?? {})[0] ?? [];
    if (rule === undefined) continue;
    const crossField = (error.contexts?.[rule] as typeof CROSS_FIELD | undefined)?.crossField === true;
    (crossField ? between : single).push([error.property, reason]);
  }
  return Object.fromEntries([...single, ...between]);
}

const CONTEXT = Symbol('validation context');

/** What a rule needs beyond the values (the cursor's key), a hidden property of the checked instance. */
export function validationContext<T>(args: ValidationArguments): T | undefined {
  return (args.object as { [CONTEXT]?: T })[CONTEXT];
}

/** Nest's ValidationPipe with the API's options: `refuse` words the route's answer, `context` reaches the rules. */
export class ApiValidationPipe extends ValidationPipe {
  constructor(
    refuse: (problems: Record<string, string>, errors: ValidationError[]) => Error,
    private readonly context?: object,
    /** Beside API_VALIDATOR_OPTIONS: e.g. keys no rule names kept (`whitelist: false`), class-transformer's options. */
    options: ValidatorOptions & Pick<ValidationPipeOptions, 'transformOptions'> = {},
  ) {
    super({
      ...API_VALIDATOR_OPTIONS,
      ...options,
      transform: true,
      validateCustomDecorators: true,
      exceptionFactory: (errors: ValidationError[]) => refuse(problemsOf(errors), errors),
    });
  }

  protected override validate(object: object, options?: ValidatorOptions) {
    if (this.context) Object.defineProperty(object, CONTEXT, { value: this.context, enumerable: false });
    return super.validate(object, options);
  }
}

export const notFound = () => new HttpException({ error: 'not_found' }, 404);
export const invalidBody = (errors: Record<string, string>) => new HttpException({ error: 'invalid_body', errors }, 422);
export const invalidQuery = (errors: Record<string, string>) => new HttpException({ error: 'invalid_query', errors }, 422);

/** A route's lead number as the API writes it (a positive whole number, no leading zero); anything else is 404 (no lead has it). */
export const LeadNumberParam = (name: string) =>
  Param(name, {
    transform(value: string): number {
      if (!/^[1-9]\d{0,14}$/.test(value)) throw notFound();
      return Number(value);
    },
  });
/** `@JsonBody(BODY_PIPE)`: after the body is read (16 KB, a JSON object), its fields: 422 `invalid_body` naming each bad one. */
export const BODY_PIPE = new ApiValidationPipe(invalidBody);

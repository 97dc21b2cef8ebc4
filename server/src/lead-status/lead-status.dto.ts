import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, Matches, ValidateBy } from 'class-validator';
import { visibleLength } from '@stickers/shared';
import { LEAD_STATUSES, STATUS_RULE, type LeadStatus } from '../domain/lead-status';
import { ExportedLeadDto } from '../export/export.dto';

/** The longest name a CRM may give (a Telegram user's first and last name fit). */
const CRM_NAME_MAX = 128;

/** Why `by` is refused (422 `invalid_body`, `errors.by`), as docs/api.md lists them. */
export const BY_RULES = {
  string: `must be a string: who changed the status (e.g. "CRM: Мария"), 1–${CRM_NAME_MAX} characters`,
  name: 'must be a name: not empty (after trimming spaces), no control characters',
  tooLong: `must be at most ${CRM_NAME_MAX} characters`,
} as const;

@ApiSchema({ name: 'CrmStatusBody' })
export class CrmStatusBodyDto {
  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES], description: 'The status the CRM has (compare-and-set)' })
  @IsIn([...LEAD_STATUSES], { message: `${STATUS_RULE} (the status the CRM has)` })
  from!: LeadStatus;

  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES], description: 'The status to set' })
  @IsIn([...LEAD_STATUSES], { message: STATUS_RULE })
  to!: LeadStatus;

  @ApiProperty({
    type: 'string',
    minLength: 1,
    maxLength: CRM_NAME_MAX,
    description: "Who changed it, as the card's status line and the history name them (e.g. `CRM: Мария`)",
  })
  // class-validator checks a property's rules from the last written up: the type first, so that a number, a list or
  // nothing at all is told it is no string (not that it is empty), then the emptiness and the characters, then the length
  // (characters as a person counts them: an emoji is one).
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @ValidateBy(
    { name: 'visibleLength', validator: { validate: (v: unknown) => typeof v === 'string' && visibleLength(v) <= CRM_NAME_MAX } },
    { message: BY_RULES.tooLong },
  )
  @Matches(/^[^\p{Cc}]+$/u, { message: BY_RULES.name })
  @IsString({ message: BY_RULES.string })
  by!: string;
}

@ApiSchema({ name: 'CrmStatusAnswer' })
export class CrmStatusAnswerDto {
  @ApiProperty({ type: () => ExportedLeadDto, description: 'The lead as `GET /leads` lists it, with its new status' })
  lead!: ExportedLeadDto;
}

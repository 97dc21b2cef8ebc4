import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { LEAD_STATUSES, STATUS_RULE, type LeadStatus } from '../domain/lead-status';
import { ExportedLeadDto } from '../export/export.dto';

/** The longest name a CRM may give (a Telegram user's first and last name fit). */
const CRM_NAME_MAX = 128;

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
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString({ message: 'must be a string' })
  @MaxLength(CRM_NAME_MAX, { message: `must be at most ${CRM_NAME_MAX} characters` })
  @Matches(/^[^\p{Cc}]+$/u, { message: 'must be a name: not empty, no control characters' })
  by!: string;
}

@ApiSchema({ name: 'CrmStatusAnswer' })
export class CrmStatusAnswerDto {
  @ApiProperty({ type: () => ExportedLeadDto, description: 'The lead as `GET /leads` lists it, with its new status' })
  lead!: ExportedLeadDto;
}

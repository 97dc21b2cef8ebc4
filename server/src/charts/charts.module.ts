import { Module } from '@nestjs/common';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ChartsService } from './charts.service';

/** The charts of the last 30 days: the inbox's (`GET /inbox/api/charts`) and the digest's picture. */
@Module({ imports: [RepositoriesModule], providers: [ChartsService], exports: [ChartsService] })
export class ChartsModule {}

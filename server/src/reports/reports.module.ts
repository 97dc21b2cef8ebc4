import { Module } from '@nestjs/common';
import { RepositoriesModule } from '../repositories/repositories.module';
import { ReportsService } from './reports.service';

@Module({ imports: [RepositoriesModule], providers: [ReportsService], exports: [ReportsService] })
export class ReportsModule {}
